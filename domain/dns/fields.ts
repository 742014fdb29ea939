import { Validation, type FieldError } from '../errors.js';
import { formatIp, parseIp } from '../net/ip.js';
import type { Forward, GroupFields, ZoneFields } from './events.js';
import { soaNameErrors } from './check-names.js';
import { normaliseAdminEmail, normaliseDomainName } from './names.js';

/**
 * Checks of group and zone fields that JSON Schema cannot say (addresses, domain
 * names), returning the stored form. Every failure is one 422 listing each bad
 * field, like a schema failure.
 */

function fail(message: string, errors: FieldError[]): never {
  throw new Validation(message, errors);
}

/** Addresses canonical (RFC 5952 for IPv6). */
function addresses(list: readonly string[], loc: (string | number)[], errors: FieldError[]): string[] {
  return list.map((a, i) => {
    const ip = parseIp(a);
    if (!ip) errors.push({ loc: [...loc, i], msg: 'not an IP address', type: 'ip_address' });
    return ip ? formatIp(ip) : a;
  });
}

function forwards(list: readonly Forward[], errors: FieldError[]): Forward[] {
  const seen = new Set<string>();
  return list.map((f, i) => {
    const zone = normaliseDomainName(f.zone);
    if (!zone) errors.push({ loc: ['body', 'forwards', i, 'zone'], msg: 'not a domain name', type: 'dns_name' });
    else if (seen.has(zone)) errors.push({ loc: ['body', 'forwards', i, 'zone'], msg: `zone ${zone} is forwarded twice`, type: 'unique' });
    if (zone) seen.add(zone);
    return { zone: zone ?? f.zone, upstreams: addresses(f.upstreams, ['body', 'forwards', i, 'upstreams'], errors) };
  });
}

/** The stored form of the group fields given (a full input or a patch). */
export function checkGroupFields<T extends Partial<GroupFields>>(fields: T): T {
  const errors: FieldError[] = [];
  const out = { ...fields };
  if (fields.bind_addresses) out.bind_addresses = addresses(fields.bind_addresses, ['body', 'bind_addresses'], errors);
  if (fields.forwards) out.forwards = forwards(fields.forwards, errors);
  if (errors.length) fail('invalid dns group', errors);
  return out;
}

/** The stored form of the zone fields given: names lower-cased without a trailing dot. */
export function checkZoneFields<T extends Partial<ZoneFields>>(fields: T): T {
  const errors: FieldError[] = [];
  const out = { ...fields };
  const name = (key: 'zone' | 'primary_ns') => {
    const value = fields[key];
    if (value === undefined || value === null) return;
    const normal = normaliseDomainName(value);
    if (normal) out[key] = normal;
    else
      errors.push({
        loc: ['body', key],
        msg: key === 'zone' ? 'not a domain name (RFC 2317 labels like 0/26 allowed)' : 'not a domain name',
        type: 'dns_name',
      });
  };
  name('zone');
  name('primary_ns');
  if (fields.admin_email !== undefined && fields.admin_email !== null) {
    const email = normaliseAdminEmail(fields.admin_email);
    if (email) out.admin_email = email;
    else errors.push({ loc: ['body', 'admin_email'], msg: 'expected local@domain', type: 'email' });
  }
  if (!errors.some((e) => e.loc[1] === 'primary_ns' || e.loc[1] === 'admin_email')) errors.push(...soaNameErrors(out));
  if (errors.length) fail(errors.some((e) => e.loc[1] === 'zone') ? 'invalid zone name' : 'invalid dns zone', errors);
  return out;
}
