/**
 * PostgreSQL array literals for statement parameters (`$3::text[]`), made here
 * instead of by node-postgres: the driver takes each element through
 * `prepareValue` and a regular-expression escape, which for a routing table's
 * 1,500 rows in nine arrays was about 5 % of the ingest's server CPU (issue 30,
 * bench/README.md, telemetry-ingest, fourth pass). The literal is the same text
 * the driver sends: every string element in double quotes with `"` and `\`
 * escaped by a backslash, `null` (and `undefined`) as NULL.
 */

/** `{"a","b\"c",NULL}`. */
export function textArray(values: readonly (string | null | undefined)[]): string {
  return literal(values, (v) => (v.indexOf('"') === -1 && v.indexOf('\\') === -1 ? `"${v}"` : `"${v.replace(/["\\]/g, '\\$&')}"`));
}

/** `{1,-2,NULL}`: integers or finite numbers (what `checkStorable` lets through). */
export function numberArray(values: readonly (number | null | undefined)[]): string {
  return literal(values, String);
}

/** `{t,f,NULL}`. */
export function booleanArray(values: readonly (boolean | null | undefined)[]): string {
  return literal(values, (v) => (v ? 't' : 'f'));
}

/** The elements between braces, comma-separated, each null or undefined as NULL and any other as `element` writes it. */
function literal<T>(values: readonly (T | null | undefined)[], element: (value: T) => string): string {
  let out = '{';
  for (let i = 0; i < values.length; i++) {
    if (i > 0) out += ',';
    const v = values[i];
    out += v === null || v === undefined ? 'NULL' : element(v);
  }
  return out + '}';
}
