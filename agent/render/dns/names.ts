import { RenderError } from '../types.js';

/**
 * Names in BIND's presentation form. Zone names may carry an RFC 2317 slash
 * (`0/26.20.172.in-addr.arpa`), which a file name cannot: the slash becomes
 * `%2F`. Zone names never hold `%`, and `-` stays itself, so the mapping is
 * one to one even for a group that has both `0/26.…` and `0-26.…`.
 */

export const zoneFileName = (zone: string): string => `${zone.replace(/\//g, '%2F')}.zone`;

/** Where a zone's file goes, relative to the rendered dir. */
export const zonePath = (zone: string): string => `dns/zones/${zoneFileName(zone)}`;

/** A name with its trailing dot: the zone files use absolute names for everything outside the zone. */
export const fqdn = (name: string): string => (name.endsWith('.') ? name : `${name}.`);

/** Characters that mean something in a zone file's name field and need a backslash. */
const SPECIAL = /[.;()"\\$@\s]/g;

/**
 * SOA RNAME from an e-mail address: the local part becomes the first label
 * (its dots escaped, `host.master@x` → `host\.master.x.`), the domain follows.
 */
export function rname(email: string): string {
  const at = email.lastIndexOf('@');
  const local = email.slice(0, at);
  const domain = email.slice(at + 1);
  if (at <= 0 || !/^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*\.?$/.test(domain) || /[\x00-\x20\x7f]/.test(local)) {
    throw new RenderError(`invalid admin_email '${email}'`);
  }
  return `${local.replace(SPECIAL, (c) => `\\${c}`)}.${fqdn(domain)}`;
}
