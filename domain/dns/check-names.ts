import { Validation, type FieldError } from '../errors.js';
import type { RecordFields, ZoneFields } from './events.js';

/**
 * BIND's `check-names` for primary zones, which `named` enforces by default
 * (`check-names primary fail`; `named-checkzone` only warns, which is why a
 * zone can pass it and still fail on every member). A name that must be a host
 * name (RFC 952/1123: labels of letters, digits and inner hyphens) is:
 *
 * - the owner of an A, AAAA or MX record (a leading `*` label allowed);
 * - the target of an NS, MX or SRV record, and of a PTR record in a reverse
 *   zone (under in-addr.arpa or ip6.arpa, RFC 2317 zones included);
 * - the SOA MNAME (`primary_ns`) and the domain of the SOA RNAME (`admin_email`).
 *
 * Names are checked absolute: a relative name inside an RFC 2317 zone
 * (`0/26.2.0.192.in-addr.arpa`) carries the slash, so no A record and no
 * relative MX target can live there. Refused at the API, because the agent
 * cannot load such a zone anywhere.
 */

const HOST_LABEL = /^[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?$/;

/** Whether an absolute name (no trailing dot; `''` the root) is a host name, optionally after a leading `*` label. */
export function isHostName(name: string, wildcard = false): boolean {
  if (name === '') return true;
  const labels = name.split('.');
  if (wildcard && labels[0] === '*') labels.shift();
  return labels.every((l) => HOST_LABEL.test(l));
}

/** A record's owner or target as an absolute name without the trailing dot. */
export function absoluteName(name: string, zone: string): string {
  if (name === '@') return zone;
  if (name.endsWith('.')) return name.slice(0, -1);
  return `${name}.${zone}`;
}

const isReverse = (zone: string) => /(^|\.)(in-addr|ip6)\.arpa$/.test(zone);

/** The host-name target of a record's stored content, when `check-names` looks at it. */
function checkedTarget(zone: string, type: string, content: string): string | undefined {
  const fields = content.split(' ');
  if (type === 'NS') return fields[0];
  if (type === 'MX') return fields[1];
  if (type === 'SRV') return fields[3] === '.' ? undefined : fields[3];
  if (type === 'PTR' && isReverse(zone)) return fields[0];
  return undefined;
}

/** What `check-names` refuses in one record of `zone` (stored form), as field errors. */
export function recordNameErrors(zone: string, record: Pick<RecordFields, 'name' | 'type' | 'content'>): FieldError[] {
  const errors: FieldError[] = [];
  if (['A', 'AAAA', 'MX'].includes(record.type) && !isHostName(absoluteName(record.name, zone), true)) {
    errors.push({
      loc: ['body', 'name'],
      msg: `the owner of an ${record.type} record must be a host name (letters, digits, inner hyphens), and ${absoluteName(record.name, zone)} is not`,
      type: 'check_names',
    });
  }
  const target = checkedTarget(zone, record.type, record.content);
  if (target !== undefined && !isHostName(absoluteName(target, zone))) {
    errors.push({
      loc: ['body', 'content'],
      msg: `the target of an ${record.type} record must be a host name (letters, digits, inner hyphens), and ${absoluteName(target, zone)} is not`,
      type: 'check_names',
    });
  }
  return errors;
}

/** 422 when BIND would refuse the record in the zone: `invalid record name` for its owner, else `invalid <TYPE> record content`. */
export function checkRecordNames(zone: string, record: Pick<RecordFields, 'name' | 'type' | 'content'>): void {
  const errors = recordNameErrors(zone, record);
  if (errors.length === 0) return;
  throw new Validation(errors[0].loc[1] === 'name' ? 'invalid record name' : `invalid ${record.type} record content`, errors);
}

/** Field errors of the SOA names a zone sets itself (null: the defaults, which are host names). */
export function soaNameErrors(zone: Partial<Pick<ZoneFields, 'primary_ns' | 'admin_email'>>): FieldError[] {
  const errors: FieldError[] = [];
  if (zone.primary_ns != null && !isHostName(zone.primary_ns)) {
    errors.push({ loc: ['body', 'primary_ns'], msg: 'must be a host name (letters, digits, inner hyphens)', type: 'check_names' });
  }
  const domain = zone.admin_email?.slice(zone.admin_email.lastIndexOf('@') + 1);
  if (domain != null && !isHostName(domain)) {
    errors.push({ loc: ['body', 'admin_email'], msg: 'the domain must be a host name (letters, digits, inner hyphens)', type: 'check_names' });
  }
  return errors;
}

/**
 * The part of a zone name SOA defaults can hang from: its longest suffix of
 * host-name labels (`0/26.2.0.192.in-addr.arpa` → `2.0.192.in-addr.arpa`,
 * `_tcp.example.dn42` → `example.dn42`); `invalid` (RFC 2606) when none is left.
 */
export function hostSuffix(zone: string): string {
  const labels = zone.split('.');
  let at = labels.length;
  while (at > 0 && HOST_LABEL.test(labels[at - 1])) at--;
  return at === labels.length ? 'invalid' : labels.slice(at).join('.');
}
