import { normaliseFingerprint } from './auth.js';
import { first, handles, values, type RpslObject } from './rpsl.js';

/** The registry objects the replica keeps in tables of their own; other classes are only counted. */
export interface AutNum {
  asn: number;
  asName: string | null;
  descr: string | null;
  mntBy: string[];
  adminC: string[];
  techC: string[];
  org: string | null;
}

export interface Mntner {
  name: string;
  descr: string | null;
  mntBy: string[];
  adminC: string[];
  techC: string[];
  /** `auth:` lines as written (one line each, whitespace collapsed). */
  auth: string[];
}

/** A person or role: who a `admin-c`/`tech-c` handle names. Roles carry no e-mail. */
export interface Contact {
  handle: string;
  kind: 'person' | 'role';
  name: string | null;
  emails: string[];
}

export interface KeyCert {
  /** `PGPKEY-<last 8 hex of the fingerprint>`. */
  name: string;
  /** 40 upper-case hex digits, or null when the object has none that parses. */
  fingerprint: string | null;
  method: string | null;
  owner: string[];
  /** The `certif:` lines joined: the ASCII-armored public key. */
  armor: string;
  mntBy: string[];
}

export interface Route {
  prefix: string;
  family: 4 | 6;
  origins: number[];
  /** The first `max-length:` value as written; null when the object has none (domain/rpki/roa.ts reads it). */
  maxLength: string | null;
}

export type Extracted =
  | { type: 'aut-num'; record: AutNum }
  | { type: 'mntner'; record: Mntner }
  | { type: 'person' | 'role'; record: Contact }
  | { type: 'key-cert'; record: KeyCert }
  | { type: 'route' | 'route6'; record: Route }
  | { type: 'other' };

export class MalformedObject extends Error {}

const MAX_ASN = 4294967295;

/** `AS4242422601` (any case) as a number; null when it is not a 32-bit ASN. */
export function parseAsn(text: string): number | null {
  const match = /^AS(\d{1,10})$/i.exec(text.trim());
  if (!match) return null;
  const asn = Number(match[1]);
  return asn <= MAX_ASN ? asn : null;
}

/** Reads the fields the replica serves out of a parsed object of a known class. */
export function extract(object: RpslObject): Extracted {
  const primary = first(object, object.type);
  if (primary === null) throw new MalformedObject(`no ${object.type} value`);
  switch (object.type) {
    case 'aut-num': {
      const asn = parseAsn(primary);
      if (asn === null) throw new MalformedObject(`aut-num ${primary} is not an AS number`);
      return {
        type: 'aut-num',
        record: {
          asn,
          asName: first(object, 'as-name'),
          descr: joined(object, 'descr'),
          mntBy: handles(object, 'mnt-by'),
          adminC: handles(object, 'admin-c'),
          techC: handles(object, 'tech-c'),
          org: first(object, 'org')?.toUpperCase() ?? null,
        },
      };
    }
    case 'mntner':
      return {
        type: 'mntner',
        record: {
          name: primary.toUpperCase(),
          descr: joined(object, 'descr'),
          mntBy: handles(object, 'mnt-by'),
          adminC: handles(object, 'admin-c'),
          techC: handles(object, 'tech-c'),
          auth: values(object, 'auth')
            .map((v) => v.replace(/\s+/g, ' ').trim())
            .filter(Boolean),
        },
      };
    case 'person':
    case 'role': {
      const handle = first(object, 'nic-hdl');
      if (handle === null) throw new MalformedObject(`${object.type} without nic-hdl`);
      return {
        type: object.type,
        record: {
          handle: handle.toUpperCase(),
          kind: object.type,
          name: primary,
          emails: object.type === 'person' ? emailsOf(object) : [],
        },
      };
    }
    case 'key-cert': {
      const fingerprint = values(object, 'fingerpr')[0];
      return {
        type: 'key-cert',
        record: {
          name: primary.toUpperCase(),
          fingerprint: fingerprint === undefined ? null : normaliseFingerprint(fingerprint),
          method: first(object, 'method'),
          owner: values(object, 'owner').map((v) => v.replace(/\s+/g, ' ')),
          armor: values(object, 'certif').join('\n'),
          mntBy: handles(object, 'mnt-by'),
        },
      };
    }
    case 'route':
    case 'route6': {
      const prefix = normalisePrefix(primary, object.type === 'route' ? 4 : 6);
      if (prefix === null) throw new MalformedObject(`${object.type} ${primary} is not a prefix`);
      const origins: number[] = [];
      for (const origin of handles(object, 'origin')) {
        const asn = parseAsn(origin);
        if (asn === null) throw new MalformedObject(`origin ${origin} is not an AS number`);
        if (!origins.includes(asn)) origins.push(asn);
      }
      return { type: object.type, record: { prefix, family: object.type === 'route' ? 4 : 6, origins, maxLength: first(object, 'max-length') } };
    }
    default:
      return { type: 'other' };
  }
}

function joined(object: RpslObject, key: string): string | null {
  const all = values(object, key);
  return all.length ? all.join('\n') : null;
}

/**
 * `e-mail:` values of a person, trimmed (some carry trailing spaces) and
 * deduplicated; values that are not an address are dropped.
 */
function emailsOf(object: RpslObject): string[] {
  const out: string[] = [];
  for (const v of values(object, 'e-mail')) {
    const address = v.split('\n')[0].trim();
    if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(address)) continue;
    if (!out.some((o) => o.toLowerCase() === address.toLowerCase())) out.push(address);
  }
  return out;
}

/** `172.22.125.128/26` or `fd42:4242:2601::/48` checked for the family; null when it is not a prefix. */
export function normalisePrefix(text: string, family: 4 | 6): string | null {
  const match = /^([^/\s]+)\/(\d{1,3})$/.exec(text.trim());
  if (!match) return null;
  const length = Number(match[2]);
  if (family === 4) {
    const octets = match[1].split('.');
    if (octets.length !== 4 || !octets.every((o) => /^\d{1,3}$/.test(o) && Number(o) <= 255)) return null;
    if (length > 32) return null;
    return `${octets.map(Number).join('.')}/${length}`;
  }
  if (length > 128 || !match[1].includes(':')) return null;
  try {
    // The WHATWG URL parser validates (and compresses) IPv6 literals without any I/O.
    const host = new URL(`http://[${match[1]}]/`).hostname;
    return `${host.slice(1, -1)}/${length}`;
  } catch {
    return null;
  }
}
