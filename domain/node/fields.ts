import { Validation, type FieldError } from '../errors.js';
import type { NodePatch } from './specs.js';
import { isIpv6LinkLocal, parseIp, parsePrefix } from '../net/ip.js';
import { baseTemplateErrors } from './base-template.js';

/**
 * Address rules of node fields the JSON Schema cannot state. Throws `Validation`
 * (422) with `invalid <field>` for the first bad field and a field error under
 * `['body', <field>, ...]` for every bad value.
 */
export function validateNodeFields(fields: NodePatch): void {
  const errors: FieldError[] = [];
  const bad = (loc: (string | number)[], msg: string) => errors.push({ loc: ['body', ...loc], msg, type: 'value_error' });

  if (fields.link_local != null) {
    // fe80::1%eth0 names an interface of one host; the node's address must not.
    if (fields.link_local.includes('%')) bad(['link_local'], 'must not carry a %zone suffix');
    else if (!isIpv6LinkLocal(parseIp(fields.link_local))) bad(['link_local'], 'must be an IPv6 address inside fe80::/10');
  }
  // BIRD takes a router id only in IPv4 dotted-quad form.
  if (fields.router_id !== undefined && parseIp(fields.router_id)?.kind() !== 'ipv4') bad(['router_id'], 'must be an IPv4 address (BIRD router id)');
  if (fields.loopback_ipv4 != null && parseIp(fields.loopback_ipv4)?.kind() !== 'ipv4') bad(['loopback_ipv4'], 'must be an IPv4 address');
  if (fields.loopback_ipv6 != null && parseIp(fields.loopback_ipv6)?.kind() !== 'ipv6') bad(['loopback_ipv6'], 'must be an IPv6 address');
  for (const [field, kind] of [
    ['ipv4_prefixes', 'ipv4'],
    ['ipv6_prefixes', 'ipv6'],
  ] as const) {
    (fields[field] ?? []).forEach((p, i) => {
      if (parsePrefix(p)?.[0].kind() !== kind) bad([field, i], `must be an ${kind === 'ipv4' ? 'IPv4' : 'IPv6'} prefix (address/length)`);
    });
  }
  // A template that could never materialise is refused when it is written, not at the next publish.
  errors.push(...baseTemplateErrors(fields.base_template, ['body', 'base_template']));
  if (errors.length > 0) throw new Validation(`invalid ${errors[0].loc[1]}`, errors);
}
