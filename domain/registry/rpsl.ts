/**
 * RPSL as the dn42 registry writes it: one object per file, `key:` padded so the
 * value starts at column 21, keys that repeat, a line that starts with whitespace
 * continues the previous value, and a line that starts with `+` continues it too
 * (`+` alone is an empty line of the value).
 */

export interface Attribute {
  /** Lower case. */
  key: string;
  /** Lines of the value joined with `\n`, each trimmed. */
  value: string;
}

export interface RpslObject {
  /** The class: the first attribute's key (`aut-num`, `mntner`, ...). */
  type: string;
  attributes: Attribute[];
}

export type ParseResult = { ok: true; object: RpslObject } | { ok: false; reason: string };

const KEY_LINE = /^([A-Za-z0-9][A-Za-z0-9_-]*):(.*)$/;

/** Parses one object's text; any line that fits none of the forms makes it malformed. */
export function parseRpsl(text: string): ParseResult {
  if (text.includes('\0')) return { ok: false, reason: 'binary content' };
  const attributes: Attribute[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i].replace(/\r$/, '');
    if (line.trim() === '') continue;
    const last = attributes[attributes.length - 1];
    if (line.startsWith('+') || /^[ \t]/.test(line)) {
      if (!last) return { ok: false, reason: `line ${i + 1}: continuation before the first attribute` };
      last.value += `\n${(line.startsWith('+') ? line.slice(1) : line).trim()}`;
      continue;
    }
    const match = KEY_LINE.exec(line);
    if (!match) return { ok: false, reason: `line ${i + 1}: neither "key:" nor a continuation` };
    attributes.push({ key: match[1].toLowerCase(), value: match[2].trim() });
  }
  if (attributes.length === 0) return { ok: false, reason: 'no attributes' };
  return { ok: true, object: { type: attributes[0].key, attributes } };
}

/** Every value of `key`, in order. */
export function values(object: RpslObject, key: string): string[] {
  return object.attributes.filter((a) => a.key === key).map((a) => a.value);
}

/** The first value of `key` (its first line), or null. */
export function first(object: RpslObject, key: string): string | null {
  const attr = object.attributes.find((a) => a.key === key);
  if (!attr) return null;
  const line = attr.value.split('\n')[0].trim();
  return line === '' ? null : line;
}

/**
 * Handles listed under `key` (`mnt-by`, `admin-c`, `origin`): RPSL allows several
 * per line separated by commas or spaces. Upper-cased (RPSL names are
 * case-insensitive) and deduplicated in order.
 */
export function handles(object: RpslObject, key: string): string[] {
  const out: string[] = [];
  for (const v of values(object, key)) {
    for (const token of v.split(/[\s,]+/)) {
      const name = token.trim().toUpperCase();
      if (name && !out.includes(name)) out.push(name);
    }
  }
  return out;
}
