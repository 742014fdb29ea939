/**
 * What changed between two JSON documents (report bodies), and the document
 * back from the first one and its changes. A change is:
 * - `{}` or an object of changes by key: the value is an object (or an array of
 *   the same length, by index) whose listed keys changed;
 * - `['=', value]`: the value replaced by `value`;
 * - `['-']`: the key removed.
 * Arrays in a change are always operations, so no key of the documents is
 * reserved. `applyChanges(base, changesBetween(base, next))` deep-equals `next`.
 */
export type JsonChange = { [key: string]: JsonChange } | ['=', unknown] | ['-'];

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The change from `base` to `next`; `{}` when they are equal. */
export function changesBetween(base: unknown, next: unknown): JsonChange {
  return changeOf(base, next) ?? {};
}

function changeOf(a: unknown, b: unknown): JsonChange | undefined {
  const nested = (isObject(a) && isObject(b)) || (Array.isArray(a) && Array.isArray(b) && a.length === b.length);
  if (!nested) return equal(a, b) ? undefined : ['=', b];
  const from = a as Record<string, unknown>;
  const to = b as Record<string, unknown>;
  const out: Record<string, JsonChange> = {};
  for (const key of Object.keys(to)) {
    if (!(key in from)) out[key] = ['=', to[key]];
    else {
      const c = changeOf(from[key], to[key]);
      if (c !== undefined) out[key] = c;
    }
  }
  for (const key of Object.keys(from)) if (!(key in to)) out[key] = ['-'];
  return Object.keys(out).length === 0 ? undefined : out;
}

function equal(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((v, i) => equal(v, b[i]));
  if (isObject(a) && isObject(b)) {
    const keys = Object.keys(a);
    return keys.length === Object.keys(b).length && keys.every((k) => k in b && equal(a[k], b[k]));
  }
  return false;
}

/** `base` with `change` applied (a new document; `base` is not modified). */
export function applyChanges(base: unknown, change: JsonChange): unknown {
  if (Array.isArray(change)) return change[0] === '=' ? change[1] : undefined;
  const keys = Object.keys(change);
  if (keys.length === 0) return base;
  const out: Record<string, unknown> | unknown[] = Array.isArray(base) ? [...base] : { ...(base as Record<string, Json>) };
  const target = out as Record<string, unknown>;
  for (const key of keys) {
    const c = change[key];
    if (Array.isArray(c) && c[0] === '-') delete target[key];
    else target[key] = applyChanges(target[key], c);
  }
  return out;
}
