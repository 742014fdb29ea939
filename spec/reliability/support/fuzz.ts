/**
 * A small, deterministic request generator over an OpenAPI 3 document: for every
 * path and method it builds a valid request from the schemas (path and body
 * values taken from a table of known ids where the name matches), then variants
 * that are wrong in one place each: types, missing and extra fields, boundary
 * lengths and numbers, NUL and lone surrogates, deep nesting, overlong paths,
 * bad JSON, wrong content types, and each credential missing, forged or of
 * another kind. Same seed, same requests.
 */
import { mulberry32 } from '../../../domain/seeded-random.js';

/** The fuzz pass's seeded generator. */
export const prng = mulberry32;

export type Schema = Record<string, any>;

export interface Operation {
  method: string;
  /** The document's path template, e.g. `/control/v1/admin/nodes/{node_id}`. */
  template: string;
  path: Schema[];
  query: Schema[];
  body?: Schema;
  /** Security scheme names of the operation (empty: public). */
  security: string[];
}

export interface FuzzRequest {
  op: Operation;
  /** What this request varies, for the failure report. */
  what: string;
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: string;
}

/** Every operation of a document; paths that do not start with `prefix` (or `/.well-known`) are under it. */
export function operations(doc: Schema, prefix: string): Operation[] {
  const out: Operation[] = [];
  for (const [p, methods] of Object.entries<Schema>(doc.paths)) {
    const template = p.startsWith(prefix) || p.startsWith('/.well-known') ? p : prefix + p;
    for (const [method, op] of Object.entries<Schema>(methods)) {
      const params: Schema[] = [...(methods.parameters ?? []), ...(op.parameters ?? [])];
      const body = op.requestBody?.content?.['application/json']?.schema;
      out.push({
        method: method.toUpperCase(),
        template,
        path: params.filter((x) => x.in === 'path'),
        query: params.filter((x) => x.in === 'query'),
        body,
        security: (op.security ?? []).flatMap((s: Schema) => Object.keys(s)),
      });
    }
  }
  return out;
}

const NUL = 'a\u0000b';
const SURROGATE = 'a\ud800b';
const DEEP = 5_000;

/** A JSON text nested `depth` objects deep (built as text: no recursion in the generator). */
export function deepJson(depth: number): string {
  return '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
}

export class Generator {
  constructor(
    private readonly rng: () => number,
    /** Known values by parameter or property name (ids of seeded things). */
    private readonly known: Record<string, unknown>,
  ) {}

  private pick<T>(xs: readonly T[]): T {
    return xs[Math.floor(this.rng() * xs.length)];
  }

  /** A value the schema accepts (as far as a small generator can tell); `name` picks a known value. */
  valid(s: Schema | undefined, name = '', depth = 0): unknown {
    if (!s) return {};
    if (name && name in this.known && this.rng() < 0.9) return this.known[name];
    if ('const' in s) return s.const;
    if (s.enum) return this.pick(s.enum);
    if (s.anyOf ?? s.oneOf) return this.valid(this.pick(s.anyOf ?? s.oneOf), name, depth);
    if (s.allOf) return Object.assign({}, ...s.allOf.map((x: Schema) => this.valid(x, name, depth)));
    const type = Array.isArray(s.type) ? s.type.find((t: string) => t !== 'null') : s.type;
    switch (type) {
      case 'string':
        return this.string(s);
      case 'integer':
      case 'number': {
        const min = s.minimum ?? (s.exclusiveMinimum !== undefined ? s.exclusiveMinimum + 1 : 0);
        const max = s.maximum ?? (s.exclusiveMaximum !== undefined ? s.exclusiveMaximum - 1 : min + 100);
        return Math.floor(min + this.rng() * Math.max(0, Math.min(max - min, 1000)));
      }
      case 'boolean':
        return this.rng() < 0.5;
      case 'null':
        return null;
      case 'array': {
        if (depth > 4) return [];
        const n = Math.max(s.minItems ?? 0, Math.min(s.maxItems ?? 2, 2));
        return Array.from({ length: n }, () => this.valid(s.items, '', depth + 1));
      }
      default: {
        if (depth > 4) return {};
        const out: Record<string, unknown> = {};
        const required = new Set<string>(s.required ?? []);
        for (const [k, sub] of Object.entries<Schema>(s.properties ?? {})) {
          if (required.has(k) || this.rng() < 0.5) out[k] = this.valid(sub, k, depth + 1);
        }
        return out;
      }
    }
  }

  private string(s: Schema): string {
    switch (s.format) {
      case 'date-time':
        return '2026-11-01T12:00:00Z';
      case 'uri':
        return 'https://example.net/x';
      case 'email':
        return 'someone@example.net';
      case 'ipv4':
        return '172.20.0.9';
      case 'ipv6':
        return 'fd42:4242:1::9';
    }
    const n = Math.max(s.minLength ?? 1, Math.min(s.maxLength ?? 8, 8));
    return 'x'.repeat(n);
  }

  /** Positions in `value` (paths of keys) with the schema there, walked together. */
  private positions(
    s: Schema | undefined,
    value: unknown,
    at: (string | number)[] = [],
    out: { at: (string | number)[]; s: Schema | undefined; v: unknown }[] = [],
  ) {
    out.push({ at, s, v: value });
    if (Array.isArray(value)) value.forEach((v, i) => this.positions(s?.items, v, [...at, i], out));
    else if (value && typeof value === 'object') {
      for (const [k, v] of Object.entries(value)) this.positions(s?.properties?.[k] ?? (s?.anyOf ?? s?.oneOf)?.[0]?.properties?.[k], v, [...at, k], out);
    }
    return out;
  }

  /** One body variant, wrong in one place: [what, JSON text]. */
  bodyVariant(s: Schema, base: unknown): [string, string] {
    const clone = structuredClone(base) as any;
    const spots = this.positions(s, clone);
    const set = (at: (string | number)[], v: unknown) => {
      if (at.length === 0) return v;
      let o = clone;
      for (const k of at.slice(0, -1)) o = o[k];
      o[at[at.length - 1]] = v;
      return clone;
    };
    const spot = this.pick(spots);
    const kind = this.pick(['type', 'missing', 'extra', 'nul', 'surrogate', 'long', 'number', 'deep', 'deep', 'shape', 'many-keys'] as const);
    const where = spot.at.join('.') || '(root)';
    switch (kind) {
      case 'type': {
        const wrong =
          typeof spot.v === 'string'
            ? 12345
            : typeof spot.v === 'number'
              ? 'not-a-number'
              : Array.isArray(spot.v)
                ? { a: 1 }
                : spot.v && typeof spot.v === 'object'
                  ? [1, 'x']
                  : 'x';
        return [`wrong type at ${where}`, JSON.stringify(set(spot.at, wrong))];
      }
      case 'missing': {
        const objects = spots.filter((p) => p.v && typeof p.v === 'object' && !Array.isArray(p.v) && Object.keys(p.v as object).length);
        if (!objects.length) return ['empty object', '{}'];
        const o = this.pick(objects);
        const key = this.pick(Object.keys(o.v as object));
        delete (o.v as Record<string, unknown>)[key];
        return [`missing ${[...o.at, key].join('.')}`, JSON.stringify(clone)];
      }
      case 'extra': {
        const objects = spots.filter((p) => p.v && typeof p.v === 'object' && !Array.isArray(p.v));
        const o = objects.length ? this.pick(objects) : undefined;
        if (o) (o.v as Record<string, unknown>)['unexpected_\u0000field'] = { x: 1 };
        return [`extra field in ${o?.at.join('.') ?? '(none)'}`, JSON.stringify(clone)];
      }
      case 'nul':
      case 'surrogate':
      case 'long': {
        const strings = spots.filter((p) => typeof p.v === 'string');
        const target = strings.length ? this.pick(strings) : spot;
        const max = target.s?.maxLength ?? 10_000;
        const value = kind === 'nul' ? NUL : kind === 'surrogate' ? SURROGATE : 'y'.repeat(this.rng() < 0.5 ? max : max + 1);
        return [`${kind} string at ${target.at.join('.') || '(root)'}`, JSON.stringify(set(target.at, value))];
      }
      case 'number': {
        const numbers = spots.filter((p) => typeof p.v === 'number');
        const target = numbers.length ? this.pick(numbers) : spot;
        const s2 = target.s ?? {};
        const value = this.pick([1e308, -1e308, 2 ** 53 + 1, 1.5, -1, 0, (s2.maximum ?? 2 ** 31) + 1, (s2.minimum ?? -(2 ** 31)) - 1]);
        return [`number ${value} at ${target.at.join('.') || '(root)'}`, JSON.stringify(set(target.at, value))];
      }
      case 'deep': {
        const objects = spots.filter((p) => p.v && typeof p.v === 'object' && p.at.length > 0);
        const target = objects.length ? this.pick(objects) : spot;
        const marker = '"__deep__"';
        const text = JSON.stringify(set(target.at, '__deep__'));
        return [`nesting ${DEEP} deep at ${target.at.join('.') || '(root)'}`, text.replace(marker, deepJson(DEEP))];
      }
      case 'shape':
        return ['body of another shape', this.pick(['[]', 'null', '"text"', '42', '[{}]', '1e308'])];
      case 'many-keys': {
        const keys: Record<string, number> = {};
        for (let i = 0; i < 2_000; i++) keys[`k${i}`] = i;
        return ['2,000 unknown keys', JSON.stringify({ ...(clone && typeof clone === 'object' ? clone : {}), ...keys })];
      }
    }
  }

  /** A path or query value that is wrong: [what, already percent-encoded value]. */
  badParam(s: Schema | undefined): [string, string] {
    return this.pick<[string, string]>([
      ['%00 in the value', 'ab%00cd'],
      ['NUL as raw percent', '%00'],
      ['lone surrogate (CESU bytes)', '%ED%A0%80'],
      ['invalid UTF-8', '%C3%28'],
      ['overlong value', 'z'.repeat(9_000)],
      ['broken percent escape', '%E0%A4%A'],
      ['1e308', '1e308'],
      ['negative number', '-1'],
      ['huge integer', '99999999999999999999999999'],
      ['dot segments', '..%2F..%2Fetc'],
      ['wrong type', s?.schema?.type === 'string' ? '12' : 'not-a-number'],
      ['empty', ''],
    ]);
  }

  encode(v: unknown): string {
    return encodeURIComponent(typeof v === 'string' ? v : JSON.stringify(v));
  }

  /** The requests for one operation: a valid one per credential kind, then variants wrong in one place. */
  requests(op: Operation, base: string, credentials: Record<string, string>, perOperation: number): FuzzRequest[] {
    const out: FuzzRequest[] = [];
    const pathValues = () => Object.fromEntries(op.path.map((p) => [p.name, this.encode(this.valid(p.schema, p.name))]));
    const url = (path: Record<string, string>, query: string) =>
      base + op.template.replace(/\{([^}]+)\}/g, (_m, n: string) => path[n] ?? 'x') + (query ? `?${query}` : '');
    const validQuery = () =>
      op.query
        .filter((q) => q.required || this.rng() < 0.5)
        .map((q) => `${q.name}=${this.encode(this.valid(q.schema, q.name))}`)
        .join('&');
    const auth = (kind: 'own' | 'none' | 'forged' | 'other'): Record<string, string> => {
      const own = op.security.map((n) => credentials[n]).find(Boolean);
      if (kind === 'none') return {};
      if (kind === 'forged')
        return {
          authorization: this.pick([
            'Bearer agt_forged.forged',
            'Bearer eyJhbGciOiJub25lIn0.e30.',
            'Bearer \u00ff',
            'Basic abc',
            'Bearer ' + 'q'.repeat(9_000),
          ]),
        };
      if (kind === 'other') {
        const others = Object.entries(credentials).filter(([n]) => !op.security.includes(n));
        return others.length ? { authorization: `Bearer ${this.pick(others)[1]}` } : {};
      }
      return own ? { authorization: `Bearer ${own}` } : {};
    };
    const json = { 'content-type': 'application/json' };
    const validBody = () => (op.body ? this.valid(op.body) : undefined);
    const add = (what: string, u: string, headers: Record<string, string>, body?: string) => out.push({ op, what, method: op.method, url: u, headers, body });

    // Valid requests with each kind of credential.
    for (const kind of ['own', 'own', 'own', 'none', 'forged', 'other'] as const) {
      const b = validBody();
      add(
        `valid, credentials ${kind}`,
        url(pathValues(), validQuery()),
        { ...auth(kind), ...(b !== undefined ? json : {}) },
        b !== undefined ? JSON.stringify(b) : undefined,
      );
    }
    // Each path and query parameter wrong.
    for (const p of op.path) {
      for (let i = 0; i < 3; i++) {
        const [what, value] = this.badParam(p);
        add(`path ${p.name}: ${what}`, url({ ...pathValues(), [p.name]: value }, validQuery()), auth('own'));
      }
    }
    for (const q of op.query) {
      for (let i = 0; i < 2; i++) {
        const [what, value] = this.badParam(q);
        add(`query ${q.name}: ${what}`, url(pathValues(), `${q.name}=${value}`), auth('own'));
      }
    }
    add('overlong path', base + op.template.replace(/\{[^}]+\}/g, 'p') + '/' + 'seg/'.repeat(3_000), auth('own'));
    // The body: variants wrong in one place, bad JSON, wrong content types.
    if (op.body) {
      while (out.length < perOperation - 4) {
        const [what, text] = this.bodyVariant(op.body, validBody());
        add(`body: ${what}`, url(pathValues(), validQuery()), { ...auth(this.rng() < 0.85 ? 'own' : 'none'), ...json }, text);
      }
      add(
        'bad JSON',
        url(pathValues(), ''),
        { ...auth('own'), ...json },
        this.pick(['{"a":', '{"a":1,}', '\u0000', '{"\\ud800":1}', '\ufeff{}', '{"a":"\\u00"}']),
      );
      add('text/plain body', url(pathValues(), ''), { ...auth('own'), 'content-type': 'text/plain' }, JSON.stringify(validBody()));
      add('form body', url(pathValues(), ''), { ...auth('own'), 'content-type': 'application/x-www-form-urlencoded' }, 'a=1&b=%00');
      add('json without a body', url(pathValues(), ''), { ...auth('own'), ...json });
    } else {
      add('unexpected JSON body', url(pathValues(), validQuery()), { ...auth('own'), ...json }, deepJson(DEEP));
      add('unexpected bad JSON', url(pathValues(), validQuery()), { ...auth('own'), ...json }, '{"a":');
    }
    return out;
  }
}
