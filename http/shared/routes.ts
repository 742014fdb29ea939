import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { Static, TSchema } from '@sinclair/typebox';
import express, { type NextFunction, type Request, type Response } from 'express';
import { auditScope } from '../../commands/audit.js';
import { RequestValidationError, type FieldError } from './errors.js';

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
  tags?: string[];
  body?: B;
  query?: Q;
  params?: P;
  /** Status → response schema (or description only). */
  responses: Record<number, TSchema | string>;
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
  return (errors ?? []).map((e) => {
    const loc: (string | number)[] = [where, ...e.instancePath.split('/').filter(Boolean).map((s) => (/^\d+$/.test(s) ? Number(s) : s.replace(/~1/g, '/').replace(/~0/g, '~')))];
    if (e.keyword === 'required') loc.push((e.params as { missingProperty: string }).missingProperty);
    if (e.keyword === 'additionalProperties') loc.push((e.params as { additionalProperty: string }).additionalProperty);
    return { loc, msg: e.keyword === 'additionalProperties' ? 'unknown field' : (e.message ?? 'invalid value'), type: e.keyword };
  });
}

/** Validates a value against a schema, throwing the 422 error on failure. */
export function validate<S extends TSchema>(schema: S, value: unknown, where: 'body' | 'query' | 'path' = 'body'): Static<S> {
  const fn = compile(where === 'body' ? bodyAjv : queryAjv, schema);
  if (!fn(value)) throw new RequestValidationError(toFieldErrors(where, fn.errors));
  return value as Static<S>;
}

interface Operation {
  method: Method;
  path: string;
  summary: string;
  tags?: string[];
  body?: TSchema;
  query?: TSchema;
  params?: TSchema;
  responses: Record<number, TSchema | string>;
  security?: string[];
}

/**
 * An Express router whose routes declare their schemas once: the same schema
 * validates the request (ajv) and describes it in the service's OpenAPI document.
 */
export class ApiRouter {
  readonly router = express.Router();
  readonly operations: Operation[] = [];

  constructor(readonly prefix = '') {}

  route<B extends TSchema | undefined = undefined, Q extends TSchema | undefined = undefined, P extends TSchema | undefined = undefined>(
    spec: RouteSpec<B, Q, P>,
  ): this {
    this.operations.push({ ...spec, path: this.prefix + spec.path });
    const expressPath = spec.path.replace(/\{(\w+)\}/g, ':$1');
    // The status an audited request answers once its write is acknowledged: the route's success response.
    const successStatus = Object.keys(spec.responses).map(Number).filter((s) => s >= 200 && s < 300).sort()[0];
    this.router[spec.method](expressPath, async (req: Request, res: Response, next: NextFunction) => {
      try {
        const audit = auditScope.getStore();
        if (audit) audit.successStatus = successStatus;
        if (spec.params) validate(spec.params, req.params, 'path');
        (req as Request & { validQuery: unknown }).validQuery = spec.query ? validate(spec.query, { ...(req.query as object) }, 'query') : req.query;
        if (spec.body) req.body = validate(spec.body, req.body ?? {}, 'body');
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
}

/** An OpenAPI 3.1 document from the routers' declared schemas. */
export function openApiDocument(info: OpenApiInfo, routers: readonly ApiRouter[]): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const op of routers.flatMap((r) => r.operations)) {
    const parameters: unknown[] = [];
    for (const [where, schema] of [['path', op.params], ['query', op.query]] as const) {
      const props = (schema as { properties?: Record<string, TSchema>; required?: string[] } | undefined)?.properties ?? {};
      for (const [name, s] of Object.entries(props)) {
        parameters.push({ name, in: where, required: where === 'path' || !!(schema as { required?: string[] }).required?.includes(name), schema: plain(s) });
      }
    }
    for (const match of op.path.matchAll(/\{(\w+)\}/g)) {
      if (!parameters.some((p) => (p as { name: string }).name === match[1])) parameters.push({ name: match[1], in: 'path', required: true, schema: { type: 'string' } });
    }
    const responses: Record<string, unknown> = {};
    for (const [status, r] of Object.entries(op.responses)) {
      responses[status] = typeof r === 'string' ? { description: r } : { description: r.description ?? `status ${status}`, content: { 'application/json': { schema: plain(r) } } };
    }
    (paths[op.path] ??= {})[op.method] = {
      summary: op.summary,
      ...(op.tags ? { tags: op.tags } : {}),
      ...(parameters.length ? { parameters } : {}),
      ...(op.body ? { requestBody: { required: true, content: { 'application/json': { schema: plain(op.body) } } } } : {}),
      responses,
      ...(op.security ? { security: op.security.map((name) => ({ [name]: [] })) } : {}),
    };
  }
  return {
    openapi: '3.1.0',
    info: { title: info.title, version: info.version, ...(info.description ? { description: info.description } : {}) },
    paths,
    ...(info.securitySchemes ? { components: { securitySchemes: info.securitySchemes } } : {}),
  };
}

/** A schema without TypeBox's symbol keys, as plain JSON Schema. */
function plain(schema: TSchema): unknown {
  return JSON.parse(JSON.stringify(schema));
}
