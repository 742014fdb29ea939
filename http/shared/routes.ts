import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { Kind, type Static, type TSchema } from '@sinclair/typebox';
import { STATUS_CODES } from 'node:http';
import express, { type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import { auditScope } from '../../commands/audit.js';
import { toFieldErrors as fieldErrorsAt } from '../../domain/net/schema.js';
import { RequestValidationError, type FieldError } from './errors.js';
import { labelRoute } from './metrics.js';
import { bodyTextsStorable, DEFAULT_BODY_LIMIT_BYTES, formatBytes, jsonBody } from './body-limit.js';

// ajv-formats ships CommonJS; its default export arrives wrapped under ESM.
const addFormats = ((addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ?? addFormatsModule) as unknown as (ajv: Ajv) => Ajv;

const bodyAjv = addFormats(new Ajv({ allErrors: true, strict: false }));
const queryAjv = addFormats(new Ajv({ allErrors: true, strict: false, coerceTypes: true, useDefaults: true }));

type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';

export interface RouteSpec<B extends TSchema | undefined, Q extends TSchema | undefined, P extends TSchema | undefined> {
  method: Method;
  /** OpenAPI style: `/nodes/{node_id}`. */
  path: string;
  summary: string;
  /** The OpenAPI operationId; by default derived from the method and the path (`operationIdOf`). */
  operationId?: string;
  tags?: string[];
  body?: B;
  /**
   * Largest JSON body in bytes (default `DEFAULT_BODY_LIMIT_BYTES`, 64 KiB): a larger
   * one is refused with 413 before it is parsed. Derive it from the body schema's
   * `maxItems`/`maxLength` with headroom; the table is in docs/decisions.md (Body limits).
   */
  bodyLimit?: number;
  query?: Q;
  params?: P;
  /**
   * Status → what the route answers: a JSON body's schema (its `description` says
   * what it is), a body of another media type (`OtherBody`), or for 204 and
   * 304 a description only; the OpenAPI spec refuses any other status without a schema.
   * An error status may give its text only: the service's shared error body is used.
   */
  responses: Record<number, ResponseSpec>;
  /** Names of security schemes that apply (OpenAPI), e.g. ['admin']. */
  security?: string[];
  handler: (
    req: Request & {
      body: B extends TSchema ? Static<B> : unknown;
      validQuery: Q extends TSchema ? Static<Q> : Record<string, unknown>;
      params: P extends TSchema ? Static<P> : Record<string, string>;
    },
    res: Response,
    next: NextFunction,
  ) => unknown;
}

const cache = new WeakMap<TSchema, ValidateFunction>();

function compile(ajv: Ajv, schema: TSchema): ValidateFunction {
  let fn = cache.get(schema);
  if (!fn) {
    fn = ajv.compile(schema);
    cache.set(schema, fn);
  }
  return fn;
}

/** ajv errors in the 422 shape: `loc` starts with where the value came from. */
export function toFieldErrors(where: 'body' | 'query' | 'path', errors: ErrorObject[] | null | undefined): FieldError[] {
  return fieldErrorsAt([where], errors);
}

/** At most this many field errors per 422; a last entry says how many more were cut. */
export const MAX_FIELD_ERRORS = 20;

/** The first `MAX_FIELD_ERRORS` errors, and a note of how many more there were. */
export function capFieldErrors(where: 'body' | 'query' | 'path', errors: FieldError[]): FieldError[] {
  if (errors.length <= MAX_FIELD_ERRORS) return errors;
  return [...errors.slice(0, MAX_FIELD_ERRORS), { loc: [where], msg: `${errors.length - MAX_FIELD_ERRORS} more errors not shown`, type: 'too_many_errors' }];
}

/** Validates a value against a schema, throwing the 422 error on failure. */
export function validate<S extends TSchema>(schema: S, value: unknown, where: 'body' | 'query' | 'path' = 'body'): Static<S> {
  const fn = compile(where === 'body' ? bodyAjv : queryAjv, schema);
  if (!fn(value)) throw new RequestValidationError(capFieldErrors(where, toFieldErrors(where, fn.errors)));
  return value as Static<S>;
}

/** Deepest nesting of arrays and objects a request may carry (free-form `labels`, `inventory`, `base_template` included). */
export const MAX_NESTING = 64;

/**
 * What PostgreSQL cannot store, refused before any schema runs: NUL (text and
 * jsonb refuse it) and lone UTF-16 surrogates in any string or key, nesting deeper
 * than `MAX_NESTING`, numbers beyond ±2^53 (no column of ours holds them exactly;
 * a bigint column refuses 1e308). Walks at most `MAX_NESTING` levels, so a body
 * nested thousands deep costs nothing more. Throws the 422 of the first problems.
 * `textsStorable`: the caller knows no string or key can hold NUL or a lone
 * surrogate (`storableJsonText`), so only numbers and nesting are checked.
 */
export function checkStorable(value: unknown, where: 'body' | 'query' | 'path', textsStorable = false): void {
  // Nearly every body is fine: a walk that only answers whether (no location kept), and the full walk for the 422's errors.
  if (textsStorable && numbersAndNestingStorable(value, 0)) return;
  const errors: FieldError[] = [];
  // The location of the value being looked at, pushed and popped as the walk goes (a body of 1,500 routes has
  // 15,000 keys: no array or object per value), copied only for an error.
  const path: (string | number)[] = [where];
  const fail = (msg: string, type: string, last?: string | number) => errors.push({ loc: last === undefined ? [...path] : [...path, last], msg, type });
  const walk = (v: unknown, depth: number): void => {
    if (errors.length > MAX_FIELD_ERRORS) return;
    if (typeof v === 'string') {
      if (textsStorable) return;
      const problem = unstorableText(v);
      if (problem) fail(problem.msg, problem.type);
    } else if (typeof v === 'number') {
      if (!storableNumber(v)) fail('number out of range', 'number_range');
    } else if (v !== null && typeof v === 'object') {
      if (depth >= MAX_NESTING) {
        fail(`nested deeper than ${MAX_NESTING} levels`, 'depth');
        return;
      }
      if (Array.isArray(v)) {
        for (let i = 0; i < v.length; i++) {
          path.push(i);
          walk(v[i], depth + 1);
          path.pop();
        }
      } else {
        for (const key in v) {
          if (!Object.hasOwn(v, key)) continue;
          const problem = textsStorable ? undefined : unstorableText(key);
          // Only a key with a problem differs from what a 422 location can show.
          const shown = problem ? storableKey(key) : key;
          if (problem) fail(`field name: ${problem.msg}`, problem.type, shown);
          path.push(shown);
          walk((v as Record<string, unknown>)[key], depth + 1);
          path.pop();
        }
      }
    }
  };
  walk(value, 0);
  if (errors.length) throw new RequestValidationError(capFieldErrors(where, errors));
}

/** True when every number is within ±2^53 and nothing is nested deeper than `MAX_NESTING` (`checkStorable`'s walk without its errors). */
function numbersAndNestingStorable(v: unknown, depth: number): boolean {
  if (typeof v === 'number') return storableNumber(v);
  if (v === null || typeof v !== 'object') return true;
  if (depth >= MAX_NESTING) return false;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) if (!numbersAndNestingStorable(v[i], depth + 1)) return false;
    return true;
  }
  for (const key in v) if (Object.hasOwn(v, key) && !numbersAndNestingStorable((v as Record<string, unknown>)[key], depth + 1)) return false;
  return true;
}

/** A number no column of ours would change: finite and within ±2^53. */
const storableNumber = (v: number): boolean => Number.isFinite(v) && Math.abs(v) <= Number.MAX_SAFE_INTEGER;

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

function unstorableText(text: string): { msg: string; type: string } | undefined {
  if (text.includes('\u0000')) return { msg: 'NUL character not allowed', type: 'string_nul' };
  if (LONE_SURROGATE.test(text)) return { msg: 'unpaired UTF-16 surrogate not allowed', type: 'string_unpaired_surrogate' };
  return undefined;
}

/** A key as a 422 location can show it (the answer itself must be valid JSON text). */
const LONE_SURROGATES = new RegExp(LONE_SURROGATE.source, 'g');

function storableKey(key: string): string {
  return key.replace(/\u0000/g, '\uFFFD').replace(LONE_SURROGATES, '\uFFFD');
}

/** A body that is not JSON: a file, a stream of Server-Sent Events. */
export interface OtherBody {
  mediaType: string;
  schema: TSchema;
  description: string;
}

export type ResponseSpec = TSchema | OtherBody | string;

const isOtherBody = (r: ResponseSpec): r is OtherBody => typeof r === 'object' && typeof (r as OtherBody).mediaType === 'string' && !(Kind in r);

/** Names of shared schemas: the OpenAPI document lists each once in `components` and refers to it. */
const componentNames = new WeakMap<object, string>();

/** Marks a schema as a shared component of the OpenAPI documents under `name` (the schema itself is returned unchanged). */
export function component<S extends TSchema>(name: string, schema: S): S {
  componentNames.set(schema, name);
  return schema;
}

interface Operation {
  method: Method;
  path: string;
  summary: string;
  operationId?: string;
  tags?: string[];
  body?: TSchema;
  bodyLimit: number;
  query?: TSchema;
  params?: TSchema;
  responses: Record<number, ResponseSpec>;
  security?: string[];
}

export interface ApiRouterOptions {
  /**
   * Run on every route of the router once its body is parsed and before it is
   * validated (the agent routes check the body's `node_id` against the token here).
   */
  afterBody?: RequestHandler[];
  /**
   * Run on every route of the router once the request is validated, just before the
   * handler; a throw is answered like the handler's (the agent routes check a query's
   * `node_id` against the token here).
   */
  beforeHandler?: (req: Request & { validQuery: Record<string, unknown> }, res: Response) => void;
}

/**
 * An Express router whose routes declare their schemas once: the same schema
 * validates the request (ajv) and describes it in the service's OpenAPI document.
 */
export class ApiRouter {
  readonly router = express.Router();
  readonly operations: Operation[] = [];

  constructor(
    readonly prefix = '',
    private readonly options: ApiRouterOptions = {},
  ) {}

  route<B extends TSchema | undefined = undefined, Q extends TSchema | undefined = undefined, P extends TSchema | undefined = undefined>(
    spec: RouteSpec<B, Q, P>,
  ): this {
    const bodyLimit = spec.bodyLimit ?? DEFAULT_BODY_LIMIT_BYTES;
    this.operations.push({ ...spec, bodyLimit, path: this.prefix + spec.path });
    const expressPath = spec.path.replace(/\{(\w+)\}/g, ':$1');
    // The status an audited request answers once its write is acknowledged: the route's success response.
    const successStatus = Object.keys(spec.responses)
      .map(Number)
      .filter((s) => s >= 200 && s < 300)
      .sort()[0];
    const label = this.prefix + spec.path;
    // The body is parsed here, per route, after the guards mounted ahead of the router (401 before 413).
    this.router[spec.method](expressPath, jsonBody(bodyLimit), ...(this.options.afterBody ?? []), async (req: Request, res: Response, next: NextFunction) => {
      labelRoute(res, label);
      try {
        const audit = auditScope.getStore();
        if (audit) audit.successStatus = successStatus;
        checkStorable(req.params, 'path');
        checkStorable(req.query, 'query');
        if (spec.body) checkStorable(req.body, 'body', bodyTextsStorable(req));
        if (spec.params) validate(spec.params, req.params, 'path');
        (req as Request & { validQuery: unknown }).validQuery = spec.query ? validate(spec.query, { ...(req.query as object) }, 'query') : req.query;
        if (spec.body) req.body = validate(spec.body, req.body ?? {}, 'body');
        this.options.beforeHandler?.(req as Request & { validQuery: Record<string, unknown> }, res);
        await spec.handler(req as never, res, next);
      } catch (err) {
        next(err);
      }
    });
    return this;
  }
}

export interface OpenApiInfo {
  title: string;
  version: string;
  description?: string;
  securitySchemes?: Record<string, unknown>;
  /** The error bodies the service answers: control/registry `{detail}`, identity `{detail, error, fatal}`. */
  errorStyle: 'control' | 'identity';
}

/**
 * The operationId of a route without an explicit one: the method, then the path
 * after its `/<service>/v1` prefix in camel case, a `{param}` read as `By<Param>`
 * (`GET /control/v1/admin/nodes/{node_id}` → `getAdminNodesByNodeId`).
 */
export function operationIdOf(method: string, path: string): string {
  const words = path
    .replace(/^\/[a-z]+\/v\d+(?=\/|$)/, '')
    .split('/')
    .filter(Boolean)
    .flatMap((segment) => {
      const param = /^\{(\w+)\}$/.exec(segment);
      return param ? ['by', ...param[1].split('_')] : segment.split(/[^A-Za-z0-9]+/);
    })
    .filter(Boolean);
  return method + words.map((w) => w[0].toUpperCase() + w.slice(1)).join('');
}

const FieldError = {
  type: 'object',
  required: ['loc', 'msg', 'type'],
  properties: {
    loc: {
      type: 'array',
      items: { anyOf: [{ type: 'string' }, { type: 'integer' }] },
      description: 'where the value came from (`body`, `query`, `path`), then the field path',
    },
    msg: { type: 'string', description: 'what is wrong with the value' },
    type: { type: 'string', description: 'the rule that failed' },
  },
};

/** The error bodies of each style, as shared components. */
function errorComponents(style: OpenApiInfo['errorStyle']): Record<string, unknown> {
  if (style === 'control') {
    return {
      FieldError,
      Error: { type: 'object', required: ['detail'], properties: { detail: { type: 'string', description: 'the error text the contract words' } } },
      ValidationError: {
        type: 'object',
        required: ['detail'],
        properties: {
          detail: {
            type: 'object',
            required: ['message', 'errors'],
            description: 'what was refused',
            properties: {
              message: { type: 'string', description: '`request validation failed`, or the rule that refused the value' },
              errors: {
                type: 'array',
                items: { $ref: '#/components/schemas/FieldError' },
                description: 'one entry per refused value (at most 20, then a count of the rest)',
              },
            },
          },
        },
      },
    };
  }
  const oauthFields = {
    error: { type: 'string', description: 'OAuth-style error code (`invalid_request`, `unauthorized`, ...)' },
    fatal: { type: 'boolean', description: 'true when the flow cannot go on and must start over' },
  };
  return {
    FieldError,
    Error: {
      type: 'object',
      required: ['detail', 'error', 'fatal'],
      properties: { detail: { type: 'string', description: 'the error text the contract words' }, ...oauthFields },
    },
    ValidationError: {
      type: 'object',
      required: ['detail', 'error', 'fatal'],
      properties: {
        detail: {
          type: 'array',
          items: { $ref: '#/components/schemas/FieldError' },
          description: 'one entry per refused value (at most 20, then a count of the rest)',
        },
        ...oauthFields,
      },
    },
  };
}

/** An OpenAPI 3.1 document from the routers' declared schemas. */
export function openApiDocument(info: OpenApiInfo, routers: readonly ApiRouter[]): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  const ids = new Set<string>();
  const components = errorComponents(info.errorStyle);
  const written = new Map<string, object>();
  const plain = (schema: TSchema) => toJsonSchema(schema, components, written);
  for (const op of routers.flatMap((r) => r.operations)) {
    const parameters: unknown[] = [];
    for (const [where, schema] of [
      ['path', op.params],
      ['query', op.query],
    ] as const) {
      const props = (schema as { properties?: Record<string, TSchema>; required?: string[] } | undefined)?.properties ?? {};
      for (const [name, s] of Object.entries(props)) {
        // A query parameter with a default may be left out: validation fills the default in.
        const required =
          where === 'path' || (!!(schema as { required?: string[] }).required?.includes(name) && (s as { default?: unknown }).default === undefined);
        parameters.push({ name, in: where, required, schema: plain(s) });
      }
    }
    for (const match of op.path.matchAll(/\{(\w+)\}/g)) {
      if (!parameters.some((p) => (p as { name: string }).name === match[1]))
        parameters.push({ name: match[1], in: 'path', required: true, schema: { type: 'string' } });
    }
    const responses: Record<string, unknown> = {};
    for (const [status, r] of Object.entries(op.responses)) {
      const code = Number(status);
      if (isOtherBody(r)) responses[status] = { description: r.description, content: { [r.mediaType]: { schema: plain(r.schema) } } };
      else if (typeof r !== 'string')
        responses[status] = {
          description: r.description ?? componentNames.get(r) ?? STATUS_CODES[code] ?? `status ${status}`,
          content: { 'application/json': { schema: plain(r) } },
        };
      else if (code >= 400)
        responses[status] = {
          description: r,
          content: { 'application/json': { schema: { $ref: `#/components/schemas/${code === 422 ? 'ValidationError' : 'Error'}` } } },
        };
      else responses[status] = { description: r };
    }
    // A secured route answers 401 from its guard before its handler runs: documented even where the route does not name it.
    if (op.security?.length && !responses['401'])
      responses['401'] = { description: 'missing or invalid credentials', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } };
    // Every route parses its body against its own limit, so any of them can answer 413.
    if (op.body && !responses['413'])
      responses['413'] = {
        description: `request body larger than ${formatBytes(op.bodyLimit)}`,
        content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
      };
    const operationId = op.operationId ?? operationIdOf(op.method, op.path);
    if (ids.has(operationId)) throw new Error(`duplicate operationId ${operationId} (${op.method} ${op.path})`);
    ids.add(operationId);
    (paths[op.path] ??= {})[op.method] = {
      operationId,
      summary: op.summary,
      ...(op.tags ? { tags: op.tags } : {}),
      ...(parameters.length ? { parameters } : {}),
      ...(op.body
        ? {
            requestBody: {
              required: true,
              description: `JSON, at most ${formatBytes(op.bodyLimit)}`,
              content: { 'application/json': { schema: plain(op.body) } },
            },
          }
        : {}),
      ...(op.body ? { 'x-body-limit': op.bodyLimit } : {}),
      responses,
      // A route that names no scheme is public: `security: []` says so rather than leaving it unknown.
      security: (op.security ?? []).map((name) => ({ [name]: [] })),
    };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: info.title,
      version: info.version,
      ...(info.description ? { description: info.description } : {}),
      license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
    },
    servers: [{ url: '/', description: 'the service that serves this document' }],
    paths,
    components: { schemas: components, ...(info.securitySchemes ? { securitySchemes: info.securitySchemes } : {}) },
  };
}

/**
 * A schema as plain JSON Schema 2020-12 (OpenAPI 3.1), without TypeBox's symbol
 * keys: TypeBox's tuples (`items: [...]`, `additionalItems: false`) become
 * `prefixItems`, `items: false`; a schema marked with `component()` is written
 * once into `components` and referred to by `$ref` everywhere it appears.
 */
function toJsonSchema(schema: TSchema, components: Record<string, unknown>, written: Map<string, object>): unknown {
  const walk = (value: unknown, top: boolean): unknown => {
    if (Array.isArray(value)) return value.map((v) => walk(v, false));
    if (!value || typeof value !== 'object') return value;
    const name = componentNames.get(value);
    if (name && !top) {
      if (!(name in components)) {
        components[name] = {};
        components[name] = walk(value, true);
        written.set(name, value);
      } else if (written.get(name) !== value && JSON.stringify(written.get(name)) !== JSON.stringify(value)) {
        throw new Error(`two different schemas are named ${name}`);
      }
      return { $ref: `#/components/schemas/${name}` };
    }
    const out: Record<string, unknown> = {};
    for (const [key, v] of Object.entries(value)) out[key] = walk(v, false);
    if (Array.isArray(out.items)) {
      const { items, additionalItems, ...rest } = out as { items: unknown[]; additionalItems?: unknown };
      return { ...rest, prefixItems: items, ...(additionalItems === false ? { items: false } : {}) };
    }
    return out;
  };
  // A response or body that is itself a component is referred to as well.
  return walk(schema, !componentNames.has(schema));
}

/**
 * `true` when a response schema describes exactly the type the code answers with
 * (each assignable to the other): `const _: Describes<typeof NodeOut, NodeOutRow> = true`
 * fails the typecheck as soon as the two drift apart.
 */
export type Describes<S extends TSchema, T> = [T] extends [Static<S>] ? ([Static<S>] extends [T] ? true : false) : false;
