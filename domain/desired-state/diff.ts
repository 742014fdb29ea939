/**
 * Field-level diff of two desired states (or any two JSON values).
 *
 * Paths are JSON-pointer-like (`/bird/cold_potato_med`, `~` and `/` in a segment
 * escaped as `~0` and `~1`), with two rules that keep a diff readable:
 * - An array of objects that all carry a unique `name` (or, failing that,
 *   `node_id`, then `interface`) is matched by that key, and its items appear
 *   as `<key>=<value>`: `/interfaces/name=wg0/listen_port`. Inserting an
 *   interface is one `added` entry, not a change to every later one.
 * - An array of plain values (addresses, allowed IPs, blocked prefixes) is one
 *   value: when it differs, one `changed` entry carries both arrays.
 * Other arrays are compared by index (`/bird/route_local_pref/0/local_pref`).
 * An added or removed object is one entry holding the whole value. Entries are
 * sorted by path (code-unit order), so the same two documents give the same list.
 */

export type DiffOp = 'added' | 'removed' | 'changed';

export interface DiffEntry {
  path: string;
  op: DiffOp;
  from?: unknown;
  to?: unknown;
}

const ITEM_KEYS = ['name', 'node_id', 'interface'] as const;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const escape = (segment: string) => segment.replace(/~/g, '~0').replace(/\//g, '~1');

export function diffStates(from: unknown, to: unknown): DiffEntry[] {
  const entries: DiffEntry[] = [];
  walk('', from, to, entries);
  return entries.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

function walk(path: string, a: unknown, b: unknown, out: DiffEntry[]): void {
  if (a === undefined && b === undefined) return;
  if (a === undefined) return void out.push({ path: path || '/', op: 'added', to: b });
  if (b === undefined) return void out.push({ path: path || '/', op: 'removed', from: a });
  if (isObject(a) && isObject(b)) {
    for (const key of new Set([...Object.keys(a), ...Object.keys(b)])) walk(`${path}/${escape(key)}`, a[key], b[key], out);
    return;
  }
  if (Array.isArray(a) && Array.isArray(b) && !(isPlainList(a) && isPlainList(b))) {
    const key = itemKey(a, b);
    if (key) {
      const index = (list: unknown[]) => new Map(list.map((item) => [String((item as Record<string, unknown>)[key]), item]));
      const [left, right] = [index(a), index(b)];
      for (const id of new Set([...left.keys(), ...right.keys()])) walk(`${path}/${escape(`${key}=${id}`)}`, left.get(id), right.get(id), out);
    } else {
      for (let i = 0; i < Math.max(a.length, b.length); i++) walk(`${path}/${i}`, a[i], b[i], out);
    }
    return;
  }
  if (!equal(a, b)) out.push({ path: path || '/', op: 'changed', from: a, to: b });
}

/** A list with no object or array in it is compared as one value. */
const isPlainList = (list: unknown[]) => list.every((v) => v === null || typeof v !== 'object');

/** The first key that every item of both lists carries as a string or number, unique within each list. */
function itemKey(a: unknown[], b: unknown[]): string | null {
  for (const key of ITEM_KEYS) {
    const unique = (list: unknown[]) => {
      const seen = new Set<string>();
      for (const item of list) {
        const v = isObject(item) ? item[key] : undefined;
        if (typeof v !== 'string' && typeof v !== 'number') return false;
        if (seen.has(String(v))) return false;
        seen.add(String(v));
      }
      return true;
    };
    if (unique(a) && unique(b)) return key;
  }
  return null;
}

function equal(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((v, i) => equal(v, b[i]));
  if (isObject(a) && isObject(b)) {
    const keys = Object.keys(a).filter((k) => a[k] !== undefined);
    return keys.length === Object.keys(b).filter((k) => b[k] !== undefined).length && keys.every((k) => equal(a[k], b[k]));
  }
  return false;
}
