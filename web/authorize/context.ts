import type { ApiResult } from './api.js';
import { problemOf, type Problem } from './problem.js';
import type { AuthorizeContext, CaptchaKind } from './types.js';

/**
 * Sorts the answer of `authorize-context` into the contract's three results,
 * plus an answer that is none of them.
 */
export function classifyContext(result: ApiResult):
  | { kind: 'valid'; context: AuthorizeContext }
  /** Faulty request whose redirect address the backend verified: hand the error back to the application. */
  | { kind: 'redirect'; redirectTo: string; error: string; detail: string }
  /** Client or redirect address invalid: terminal screen; the raw query's address is never used. */
  | { kind: 'fatal'; problem: Problem }
  | { kind: 'failed'; problem: Problem } {
  const body = result.body as Record<string, unknown> | null;
  if (result.status === 200 && body && typeof body.redirect_to === 'string') {
    return { kind: 'redirect', redirectTo: body.redirect_to, error: String(body.error ?? ''), detail: String(body.detail ?? body.error ?? '') };
  }
  if (result.status === 200 && isContext(body)) return { kind: 'valid', context: withCaptcha(body) };
  const problem = problemOf(result);
  if (problem.fatal) return { kind: 'fatal', problem };
  return { kind: 'failed', problem };
}

function isContext(body: unknown): body is AuthorizeContext {
  const b = body as Partial<AuthorizeContext> | null;
  return !!b && typeof b.client?.name === 'string' && Array.isArray(b.scopes) && typeof b.params === 'object' && b.params !== null;
}

/** An unknown or missing captcha kind counts as `none`: the page sends no ticket, and a service that wanted one refuses (it fails closed). */
function withCaptcha(body: AuthorizeContext): AuthorizeContext {
  const kind = body.captcha?.kind;
  const known: CaptchaKind = kind === 'pow' || kind === 'external' ? kind : 'none';
  return { ...body, captcha: { kind: known, endpoint: typeof body.captcha?.endpoint === 'string' ? body.captcha.endpoint : null } };
}
