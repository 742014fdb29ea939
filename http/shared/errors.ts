import type { ErrorRequestHandler, Request, RequestHandler, Response } from 'express';
import { DomainError, Validation, type FieldError } from '../../domain/errors.js';
import type { Logger } from '../../infra/logger.js';

export type { FieldError };

/** A request that failed schema validation (422). */
export class RequestValidationError extends Error {
  constructor(
    readonly errors: FieldError[],
    message = 'request validation failed',
  ) {
    super(message);
    this.name = 'RequestValidationError';
  }
}

/** Throws `err` where an expression is expected: `(await find()) ?? throwIt(new NotFound(...))`. */
export function throwIt(err: Error): never {
  throw err;
}

/** An error that carries its HTTP status and `detail` text as the contract words them. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly detail: string,
    /** Identity service only: OAuth-style error code and whether the flow can go on. */
    readonly oauth?: { error: string; fatal: boolean },
  ) {
    super(detail);
    this.name = 'HttpError';
  }
}

const STATUS_OF: Record<DomainError['kind'], number> = {
  BadReference: 400,
  BadRequest: 400,
  Unauthorized: 401,
  Forbidden: 403,
  NotFound: 404,
  Conflict: 409,
  IllegalState: 409,
  Gone: 410,
  Validation: 422,
  TooManyRequests: 429,
  Unavailable: 503,
};

/** How a service words its error bodies. */
export type ErrorStyle = 'control' | 'identity';

const OAUTH_CODE: Record<number, string> = {
  400: 'invalid_request',
  401: 'invalid_token',
  403: 'access_denied',
  404: 'not_found',
  409: 'conflict',
  410: 'expired',
  413: 'invalid_request',
  422: 'invalid_request',
  429: 'slow_down',
  500: 'server_error',
  503: 'temporarily_unavailable',
};

interface Mapped {
  status: number;
  body: Record<string, unknown>;
}

export function mapError(err: unknown, style: ErrorStyle): Mapped | undefined {
  if (err instanceof RequestValidationError) {
    return style === 'control'
      ? { status: 422, body: { detail: { message: err.message, errors: err.errors } } }
      : { status: 422, body: { detail: err.errors, error: 'invalid_request', fatal: false } };
  }
  if (err instanceof DomainError) {
    const status = STATUS_OF[err.kind];
    if (err instanceof Validation) {
      return style === 'control'
        ? { status, body: { detail: { message: err.message, errors: err.errors } } }
        : {
            status,
            body: {
              detail: err.errors.length ? err.errors : [{ loc: ['body'], msg: err.message, type: 'value_error' }],
              error: 'invalid_request',
              fatal: false,
            },
          };
    }
    return { status, body: bodyFor(style, status, err.message) };
  }
  if (err instanceof HttpError) {
    return { status: err.status, body: bodyFor(style, err.status, err.detail, err.oauth) };
  }
  // Express/body-parser errors carry a status (malformed JSON, too large).
  const status = (err as { status?: number; statusCode?: number })?.status ?? (err as { statusCode?: number })?.statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    const type = (err as { type?: string }).type;
    const detail = type === 'entity.parse.failed' ? 'invalid JSON body' : type === 'entity.too.large' ? 'request body too large' : 'bad request';
    if (status === 400 && type === 'entity.parse.failed' && style === 'control') {
      return { status: 422, body: { detail: { message: detail, errors: [{ loc: ['body'], msg: detail, type: 'json_invalid' }] } } };
    }
    return { status, body: bodyFor(style, status, detail) };
  }
  return undefined;
}

function bodyFor(style: ErrorStyle, status: number, detail: string, oauth?: { error: string; fatal: boolean }): Record<string, unknown> {
  if (style === 'control') return { detail };
  return { detail, error: oauth?.error ?? OAUTH_CODE[status] ?? 'error', fatal: oauth?.fatal ?? false };
}

/** What a request that needs the database answers while it cannot be reached. */
export const DATABASE_UNAVAILABLE = 'service unavailable: database unreachable; retry later';
/** Seconds a client is asked to wait (`Retry-After`) during a database outage. */
export const DATABASE_RETRY_AFTER_SECONDS = 5;

// Node socket errors of a connection that cannot be made or was cut.
const SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN', 'EPIPE']);
// SQLSTATE: admin shutdown, crash shutdown, cannot connect now, too many connections; class 08 is any connection exception.
const SQLSTATES = new Set(['57P01', '57P02', '57P03', '53300']);
// node-postgres and pg-pool errors that carry no code.
const PG_MESSAGES = [
  'Connection terminated',
  'timeout exceeded when trying to connect',
  'Client has encountered a connection error and is not queryable',
  'Client was closed and is not queryable',
  'Cannot use a pool after calling end on the pool',
];

/** True for an error that says the database cannot be reached now (not that a statement was wrong). */
export function isDatabaseUnavailable(err: unknown): boolean {
  for (let e = err, depth = 0; e && typeof e === 'object' && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && (SOCKET_CODES.has(code) || SQLSTATES.has(code) || /^08[0-9A-Z]{3}$/.test(code))) return true;
    const message = (e as { message?: unknown }).message;
    if (typeof message === 'string' && PG_MESSAGES.some((m) => message.startsWith(m))) return true;
    if (e instanceof AggregateError && e.errors.some((inner) => isDatabaseUnavailable(inner))) return true;
  }
  return false;
}

/**
 * One log line per outage, not one per request: the first failure logs, the
 * following ones are counted; a failure more than `quietMs` after the last one
 * starts a new outage (and reports how many requests the previous one refused).
 */
export class OutageLog {
  private last = -Infinity;
  private refused = 0;

  constructor(private readonly quietMs = 30_000) {}

  /** Counts one refused request; true when it is the first of an outage (log it). */
  note(now = Date.now()): { first: boolean; previous: number } {
    const first = now - this.last > this.quietMs;
    const previous = first ? this.refused : 0;
    if (first) this.refused = 0;
    this.refused++;
    this.last = now;
    return { first, previous };
  }
}

/** The process's database outages (every service's error handler notes into it). */
export const databaseOutage = new OutageLog();

/**
 * Answers a database-unavailable error with 503 and `Retry-After` (`body` in the
 * service's style); the outage's first refusal logs it. False for any other error.
 */
export function answerDatabaseUnavailable(err: unknown, req: Request, res: Response, outage: OutageLog, log: Logger, body: Record<string, unknown>): boolean {
  if (!isDatabaseUnavailable(err)) return false;
  const { first, previous } = outage.note();
  if (first)
    (log ?? req.log).error(
      { err, requestId: req.id, ...(previous ? { previousOutageRefused: previous } : {}) },
      'database unavailable: answering 503 until it is back (logged once per outage)',
    );
  if (!res.headersSent) {
    res.setHeader('Retry-After', String(DATABASE_RETRY_AFTER_SECONDS));
    res.status(503).json(body);
  }
  return true;
}

/** The one place errors become responses. Unknown errors are logged and answered 500 without internals. */
export function errorHandler(style: ErrorStyle, log: Logger): ErrorRequestHandler {
  const outage = databaseOutage;
  return (err, req, res, _next) => {
    const mapped = mapError(err, style);
    if (mapped) {
      res.status(mapped.status).json(mapped.body);
      return;
    }
    if (answerDatabaseUnavailable(err, req, res, outage, log, bodyFor(style, 503, DATABASE_UNAVAILABLE))) return;
    (req.log ?? log).error({ err, requestId: req.id }, 'unhandled error');
    if (res.headersSent) return;
    res.status(500).json(bodyFor(style, 500, 'internal server error'));
  };
}

export function notFoundHandler(style: ErrorStyle): RequestHandler {
  return (_req, res) => {
    res.status(404).json(bodyFor(style, 404, 'not found'));
  };
}
