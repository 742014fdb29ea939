import type { FieldError } from '../../domain/errors.js';
import type { ApiResult } from './api.js';

/** What the page tells the user about a failed call. */
export interface Problem {
  status: number;
  /** The contract's `detail` text when the service gave one, else the page's own words. */
  detail: string;
  /** OAuth-style `error` code of the body, when present. */
  error?: string;
  /** The flow cannot continue (`fatal` true in the body): terminal screen, never a redirect. */
  fatal: boolean;
  /** Trying the same step again may help: no answer at all (status 0) or the service is unavailable. */
  retryable: boolean;
}

export const NETWORK_FAILURE = 'The identity service could not be reached. Check your connection and try again.';

/**
 * The problem of an answer that is not the success the caller wanted. The body
 * is `{detail, error, fatal}`; a `detail` array is a request-validation error
 * (422) and is shown as its messages. Status 0 is the network failure (or a
 * local step that never reached the service); it can always be retried.
 */
export function problemOf(result: ApiResult): Problem {
  const body = (typeof result.body === 'object' && result.body !== null ? result.body : {}) as { detail?: unknown; error?: unknown; fatal?: unknown };
  // No answer: the network, or a step of the page's own (a puzzle not solved, a widget not loaded) that says why.
  if (result.status === 0) return { status: 0, detail: typeof body.detail === 'string' ? body.detail : NETWORK_FAILURE, fatal: false, retryable: true };
  return {
    status: result.status,
    detail: detailText(body.detail, typeof body.error === 'string' ? body.error : undefined, result.status),
    ...(typeof body.error === 'string' ? { error: body.error } : {}),
    fatal: body.fatal === true,
    retryable: result.status === 503 || result.status === 502 || result.status === 504,
  };
}

/** The body's `detail`; without one (the contract's fatal shape is `{error, fatal}`) the error code is named. */
function detailText(detail: unknown, error: string | undefined, status: number): string {
  if (typeof detail === 'string' && detail.trim() !== '') return detail;
  if (Array.isArray(detail)) {
    const messages = (detail as Partial<FieldError>[]).map(fieldMessage).filter((m) => m !== '');
    if (messages.length > 0) return messages.join('; ');
  }
  if (error) return `The identity service refused the request (${error}, HTTP ${status}).`;
  return `The identity service answered with an unexpected error (HTTP ${status}).`;
}

function fieldMessage(e: Partial<FieldError>): string {
  if (typeof e?.msg !== 'string') return '';
  const where = Array.isArray(e.loc) ? e.loc.filter((p) => p !== 'body').join('.') : '';
  return where ? `${where}: ${e.msg}` : e.msg;
}
