/**
 * DNS names as the zone-file presentation form writes them, checked as strictly
 * as the desired-state schema (`DnsStateSchema`), so a name accepted here never
 * makes a materialisation fail.
 *
 * A label is 1 to 63 characters of letters, digits, `_`, `-` and `/` (RFC 2317
 * classless delegation: `0/26.2.0.192.in-addr.arpa`), starting and ending with a
 * letter, digit or `_`; a name is at most 253 characters.
 */

const LABEL = /^[A-Za-z0-9_](?:[A-Za-z0-9_/-]{0,61}[A-Za-z0-9_])?$/;
const MAX_NAME = 253;

function labelsValid(name: string): boolean {
  return name.length >= 1 && name.length <= MAX_NAME && name.split('.').every((l) => LABEL.test(l));
}

/**
 * A zone (or forward zone, primary NS) name: one optional trailing dot is
 * dropped and letters are lower-cased (DNS names compare case-insensitively, so
 * `Example.DN42` and `example.dn42.` are one zone). Null when invalid.
 */
export function normaliseDomainName(text: string): string | null {
  const name = (text.endsWith('.') ? text.slice(0, -1) : text).toLowerCase();
  return labelsValid(name) ? name : null;
}

/** A record owner name relative to its zone: `@` (apex), `*`, `*.<name>` or `<name>`, without a trailing dot. */
export function isRecordName(text: string): boolean {
  if (text === '@' || text === '*') return true;
  return labelsValid(text.startsWith('*.') ? text.slice(2) : text);
}

/**
 * A name a record points at (CNAME, NS, PTR, MX and SRV targets): `@`, or a name
 * that is absolute with a trailing dot (`ns1.example.dn42.`) or relative to the
 * zone without one, exactly as a zone file reads it.
 */
export function isTargetName(text: string): boolean {
  if (text === '@') return true;
  return labelsValid(text.endsWith('.') ? text.slice(0, -1) : text);
}

/** `local@domain` with a valid domain; the SOA RNAME. Returns it with the domain normalised, or null. */
export function normaliseAdminEmail(text: string): string | null {
  const at = text.indexOf('@');
  if (at < 1 || at !== text.lastIndexOf('@')) return null;
  const local = text.slice(0, at);
  const domain = normaliseDomainName(text.slice(at + 1));
  if (!domain || !/^[A-Za-z0-9!#$%&'*+/=?^_`{|}~.-]{1,64}$/.test(local)) return null;
  return `${local}@${domain}`;
}
