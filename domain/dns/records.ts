import { Validation } from '../errors.js';
import { formatIp, parseIp } from '../net/ip.js';
import { DNS_RECORD_TYPES } from './state-schema.js';
import { isRecordName, isTargetName } from './names.js';

/**
 * Record content per type, in zone-file presentation form. The node agent writes
 * `content` into the zone file as it stands, so each type accepts exactly its
 * fields, single spaces between them, and never a newline, `;` (a comment) or a
 * parenthesis outside a quoted string: a record can only ever be one line of
 * its own type.
 *
 * `checkRecordContent` returns the stored form: addresses canonical, fields
 * joined by one space, TXT as quoted strings (plain text is quoted and split
 * into 255-byte strings), a CAA value quoted.
 */

export type RecordType = (typeof DNS_RECORD_TYPES)[number];

const MAX_CONTENT = 4096;
const u16 = (s: string) => /^\d{1,5}$/.test(s) && Number(s) <= 65535;
const u8 = (s: string) => /^\d{1,3}$/.test(s) && Number(s) <= 255;
const hex = (s: string) => /^[0-9A-Fa-f]+$/.test(s) && s.length % 2 === 0;
/** A quoted character-string: `"..."` with `\"` and `\\` escapes. */
const QUOTED = /"(?:[^"\\]|\\[\s\S])*"/y;

type Check = (content: string) => string | null;

const fields = (content: string) => content.trim().split(/\s+/);

/** `n` whitespace-separated fields, each passing its check, joined by single spaces. */
const shaped =
  (...checks: ((field: string) => boolean)[]): Check =>
  (content) => {
    const parts = fields(content);
    return parts.length === checks.length && parts.every((p, i) => checks[i](p)) ? parts.join(' ') : null;
  };

/** DS, SSHFP, TLSA: small integers, then hex that zone files may split with spaces. */
const numbersThenHex =
  (...checks: ((field: string) => boolean)[]): Check =>
  (content) => {
    const parts = fields(content);
    const data = parts.slice(checks.length).join('');
    return parts.length > checks.length && checks.every((c, i) => c(parts[i])) && hex(data)
      ? [...parts.slice(0, checks.length), data.toUpperCase()].join(' ')
      : null;
  };

const CHECKS: Record<RecordType, Check> = {
  A: (c) => {
    const ip = parseIp(c.trim());
    return ip?.kind() === 'ipv4' ? formatIp(ip) : null;
  },
  AAAA: (c) => {
    const ip = parseIp(c.trim());
    return ip?.kind() === 'ipv6' ? formatIp(ip) : null;
  },
  CNAME: shaped(isTargetName),
  NS: shaped(isTargetName),
  PTR: shaped(isTargetName),
  MX: shaped(u16, isTargetName),
  SRV: shaped(u16, u16, u16, (t) => t === '.' || isTargetName(t)),
  TXT: txt,
  CAA: caa,
  DS: numbersThenHex(u16, u8, u8),
  SSHFP: numbersThenHex(u8, u8),
  TLSA: numbersThenHex(u8, u8, u8),
};

/** What each type expects, for the error message. */
const EXPECTED: Record<RecordType, string> = {
  A: 'an IPv4 address',
  AAAA: 'an IPv6 address',
  CNAME: 'a domain name',
  NS: 'a domain name',
  PTR: 'a domain name',
  MX: '"<preference 0-65535> <domain name>"',
  SRV: '"<priority> <weight> <port> <target>" (0-65535 each)',
  TXT: 'text, or quoted strings of at most 255 bytes each',
  CAA: '"<flags 0-255> <tag> <value>"',
  DS: '"<key tag> <algorithm> <digest type> <hex digest>"',
  SSHFP: '"<algorithm> <fingerprint type> <hex fingerprint>"',
  TLSA: '"<usage> <selector> <matching type> <hex data>"',
};

const CONTROL = /[\u0000-\u001f\u007f]/;

/** The stored form of a record's content, or 422 naming what the type expects. */
export function checkRecordContent(type: RecordType, content: string): string {
  const stored = content.length <= MAX_CONTENT && !CONTROL.test(content) ? CHECKS[type](content) : null;
  if (stored === null || stored.length > MAX_CONTENT) {
    throw new Validation(`invalid ${type} record content`, [{ loc: ['body', 'content'], msg: `expected ${EXPECTED[type]}`, type: 'dns_content' }]);
  }
  return stored;
}

/** 422 unless `name` is a record owner name (`@`, `*`, `*.x`, or a relative name). */
export function checkRecordName(name: string): void {
  if (!isRecordName(name)) {
    throw new Validation('invalid record name', [
      { loc: ['body', 'name'], msg: 'expected @, * or a name relative to the zone, without a trailing dot', type: 'dns_name' },
    ]);
  }
}

/** Quoted strings as given (each at most 255 bytes), or plain text quoted and split into 255-byte strings. */
function txt(content: string): string | null {
  const text = content.trim();
  if (text.length === 0) return null;
  if (!text.startsWith('"')) return quoteText(text);
  const strings: string[] = [];
  let at = 0;
  while (at < text.length) {
    QUOTED.lastIndex = at;
    const m = QUOTED.exec(text);
    if (!m || Buffer.byteLength(unescape(m[0].slice(1, -1))) > 255) return null;
    strings.push(m[0]);
    at = QUOTED.lastIndex;
    const gap = /\s*/y;
    gap.lastIndex = at;
    gap.exec(text);
    if (gap.lastIndex === at && at < text.length) return null;
    at = gap.lastIndex;
  }
  return strings.join(' ');
}

const unescape = (s: string) => s.replace(/\\([\s\S])/g, '$1');
const escape = (s: string) => s.replace(/[\\"]/g, (c) => `\\${c}`);

function quoteText(text: string): string {
  const chunks: string[] = [];
  let chunk = '';
  for (const ch of text) {
    if (Buffer.byteLength(chunk + ch) > 255) {
      chunks.push(chunk);
      chunk = '';
    }
    chunk += ch;
  }
  chunks.push(chunk);
  return chunks.map((c) => `"${escape(c)}"`).join(' ');
}

/** `flags tag value`; an unquoted value is quoted. */
function caa(content: string): string | null {
  const m = /^(\d{1,3})\s+([A-Za-z0-9]{1,15})\s+("(?:[^"\\]|\\.)*"|[^\s"();\\]+)$/.exec(content.trim());
  if (!m || !u8(m[1])) return null;
  return `${Number(m[1])} ${m[2].toLowerCase()} ${m[3].startsWith('"') ? m[3] : `"${m[3]}"`}`;
}
