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
  let out = '{';
  for (let i = 0; i < values.length; i++) {
    if (i > 0) out += ',';
    const v = values[i];
    if (v === null || v === undefined) out += 'NULL';
    else out += v.indexOf('"') === -1 && v.indexOf('\\') === -1 ? `"${v}"` : `"${v.replace(/["\\]/g, '\\$&')}"`;
  }
  return out + '}';
}

/** `{1,-2,NULL}`: integers or finite numbers (what `checkStorable` lets through). */
export function numberArray(values: readonly (number | null | undefined)[]): string {
  let out = '{';
  for (let i = 0; i < values.length; i++) {
    if (i > 0) out += ',';
    const v = values[i];
    out += v === null || v === undefined ? 'NULL' : String(v);
  }
  return out + '}';
}

/** `{t,f,NULL}`. */
export function booleanArray(values: readonly (boolean | null | undefined)[]): string {
  let out = '{';
  for (let i = 0; i < values.length; i++) {
    if (i > 0) out += ',';
    const v = values[i];
    out += v === null || v === undefined ? 'NULL' : v ? 't' : 'f';
  }
  return out + '}';
}
