import type { ErrorRequestHandler, Express } from 'express';
import { CaptchaRefused } from '../../commands/identity/verification.js';
import type { Logger } from '../../infra/logger.js';
import { answerDatabaseUnavailable, DATABASE_UNAVAILABLE, databaseOutage, HttpError, mapError, notFoundHandler } from '../shared/errors.js';

/**
 * Error bodies of the identity service: `{detail, error, fatal}` (document 1,
 * Errors). `detail` is the contract's text, or an array of field errors for a
 * request-validation failure (always 422). `error` is one of the OAuth-style codes
 * below; `fatal` is true only where the flow cannot continue at all (the
 * authorize-context's unverified client or redirect address).
 */
export const IDENTITY_ERROR = {
  /** 400/422: the request is malformed or a value breaks a rule. */
  invalidRequest: 'invalid_request',
  /** 400, fatal: authorize-context or approve names no registered application. */
  invalidClient: 'invalid_client',
  /** 400, fatal: the redirect URI is not one the application registered (exact match). */
  invalidRedirectUri: 'invalid_redirect_uri',
  /** 400: the captcha ticket or pass was refused (`captcha verification failed`). */
  captchaFailed: 'captcha_failed',
  /** 400: a challenge answer that does not verify (counts as an attempt). */
  wrongAnswer: 'wrong_answer',
  /** 401: missing or invalid bearer token. */
  invalidToken: 'invalid_token',
  /** 403: the caller may not do this. */
  accessDenied: 'access_denied',
  /** 404: no such ASN, option, challenge or resource. */
  notFound: 'not_found',
  /** 409: the object is not in a state that allows this (e.g. a terminal challenge). */
  conflict: 'conflict',
  /** 410: the challenge or ceremony has expired. */
  expired: 'expired',
  /** 429: a limit of the contract's Limits table was hit. */
  rateLimited: 'rate_limited',
  /** 500: a bug; details only in the logs. */
  serverError: 'server_error',
  /** 503: a dependency (registry replica, mail sender, PGP machinery) is unavailable. */
  unavailable: 'temporarily_unavailable',
} as const;

export type IdentityErrorCode = (typeof IDENTITY_ERROR)[keyof typeof IDENTITY_ERROR];

const CODE_OF_STATUS: Record<number, IdentityErrorCode> = {
  400: IDENTITY_ERROR.invalidRequest,
  401: IDENTITY_ERROR.invalidToken,
  403: IDENTITY_ERROR.accessDenied,
  404: IDENTITY_ERROR.notFound,
  409: IDENTITY_ERROR.conflict,
  410: IDENTITY_ERROR.expired,
  422: IDENTITY_ERROR.invalidRequest,
  429: IDENTITY_ERROR.rateLimited,
  500: IDENTITY_ERROR.serverError,
  503: IDENTITY_ERROR.unavailable,
};

/** An identity-service refusal with its own code; `fatal` defaults to false. */
export function identityError(
  status: number,
  detail: string,
  error: IdentityErrorCode = CODE_OF_STATUS[status] ?? IDENTITY_ERROR.invalidRequest,
  fatal = false,
): HttpError {
  return new HttpError(status, detail, { error, fatal });
}

export const CAPTCHA_FAILED = 'captcha verification failed';

/** The fixed 400 of every captcha refusal (ticket missing, forged, replayed, expired; pass invalid). */
function captchaFailed(): HttpError {
  return identityError(400, CAPTCHA_FAILED, IDENTITY_ERROR.captchaFailed);
}

interface Mapped {
  status: number;
  body: { detail: unknown; error: string; fatal: boolean };
}

/**
 * Any error as the identity body. Domain errors and statuses without an explicit
 * code get the code of their status. A body that is not JSON is a request-validation
 * error too, so it is a 422 with a `detail` array like every other one. A refused
 * captcha, wherever the flow checked it, is the fixed 400 `captcha_failed`.
 */
export function mapIdentityError(err: unknown): Mapped | undefined {
  if ((err as { type?: string })?.type === 'entity.parse.failed') {
    return {
      status: 422,
      body: { detail: [{ loc: ['body'], msg: 'invalid JSON body', type: 'json_invalid' }], error: IDENTITY_ERROR.invalidRequest, fatal: false },
    };
  }
  if (err instanceof CaptchaRefused) err = captchaFailed();
  const mapped = mapError(err, 'identity');
  if (!mapped) return undefined;
  const explicit = err instanceof HttpError && err.oauth !== undefined;
  const body = mapped.body as Mapped['body'];
  return {
    status: mapped.status,
    body: { detail: body.detail, error: explicit ? body.error : (CODE_OF_STATUS[mapped.status] ?? IDENTITY_ERROR.invalidRequest), fatal: body.fatal ?? false },
  };
}

export function identityErrorHandler(log: Logger): ErrorRequestHandler {
  return (err, req, res, _next) => {
    const mapped = mapIdentityError(err);
    if (mapped) {
      if (mapped.status >= 500) (req.log ?? log).warn({ err, requestId: req.id }, 'identity request failed');
      res.status(mapped.status).json(mapped.body);
      return;
    }
    if (answerDatabaseUnavailable(err, req, res, databaseOutage, log, { detail: DATABASE_UNAVAILABLE, error: CODE_OF_STATUS[503], fatal: false })) return;
    (req.log ?? log).error({ err, requestId: req.id }, 'unhandled error');
    if (res.headersSent) return;
    res.status(500).json({ detail: 'internal server error', error: IDENTITY_ERROR.serverError, fatal: false });
  };
}

/** The identity app's tail: JSON 404 for unknown paths, then the identity error handler. */
export function finishIdentityApp(app: Express, log: Logger): Express {
  app.use(notFoundHandler('identity'));
  app.use(identityErrorHandler(log));
  return app;
}
