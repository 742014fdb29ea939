import { checkAuthorizationRequest, redirectWith, type AuthorizationCheck, type ParamValues } from '../../../domain/identity/authorization-request.js';
import { activeClient } from '../../../projections/oidc/queries.js';
import type { ServiceContext } from '../../shared/context.js';
import { identityError } from '../errors.js';

/** A request checked against the application its `client_id` names and the resource allow-list (OIDC_RESOURCES). */
export async function checkRequest(ctx: ServiceContext, values: ParamValues): Promise<AuthorizationCheck> {
  const clientId = values.get('client_id');
  const client = clientId?.length === 1 ? await activeClient(ctx.pool, clientId[0]) : undefined;
  return checkAuthorizationRequest(values, client, ctx.config.oidcResources ?? []);
}

/** The fatal result as the contract's 400 `{detail, error, fatal: true}`: the page shows it and never redirects. */
export function fatalError(check: Extract<AuthorizationCheck, { result: 'fatal' }>): Error {
  return identityError(400, check.detail, check.error, true);
}

/**
 * A faulty request whose redirect URI is verified: `{redirect_to, error, detail}`,
 * the address carrying the OAuth error, the state and the issuer (RFC 9207).
 */
export function errorRedirect(
  check: Extract<AuthorizationCheck, { result: 'redirect' }>,
  issuer: string,
): { redirect_to: string; error: string; detail: string } {
  return {
    redirect_to: redirectWith(check.redirect_uri, { error: check.error, error_description: check.detail, state: check.state, iss: issuer }),
    error: check.error,
    detail: check.detail,
  };
}
