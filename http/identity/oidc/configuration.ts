import { hkdfSync, type JsonWebKey } from 'node:crypto';
import { errors, type Configuration, type KoaContextWithOIDC, type ResourceServer } from 'oidc-provider';
import { SUPPORTED_SCOPES } from '../../../domain/identity/authorization-request.js';
import type { OidcStorageDeps } from '../../../commands/identity/oidc-storage.js';
import type { Config } from '../../../infra/config.js';
import { keySecret, type SigningKey } from '../../../infra/identity/keys.js';
import { CLAIMS_OF_SCOPE, findAccount, type AccountDeps } from './account.js';
import { eventStoreAdapter } from './adapter.js';

/** Lifetimes of the contract's Limits table, in seconds. */
export const CODE_TTL = 120;
export const ACCESS_TOKEN_TTL = 60 * 60;
export const ID_TOKEN_TTL = 60 * 60;
/** A refresh token lives 120 days from its last use (sliding)... */
export const REFRESH_TOKEN_TTL = 120 * 24 * 60 * 60;
/** ...but never beyond a year after the authorization that started its chain (the cap). */
export const REFRESH_TOKEN_CAP = 365 * 24 * 60 * 60;

/** The paths the provider answers on; authorization is the page's, the provider never serves it. */
export const PROVIDER_ROUTES = {
  authorization: '/authorize',
  token: '/token',
  userinfo: '/userinfo',
  jwks: '/.well-known/jwks.json',
} as const;

export interface ProviderDeps extends OidcStorageDeps, AccountDeps {
  config: Config;
}

/**
 * `refresh token active → refresh grant → old revoked, new issued`: each new
 * token gets 120 days again, cut so the chain ends a year after its first token.
 */
export function refreshTokenTtl(_ctx: unknown, token: { iiat?: number; iat?: number }): number {
  const start = token.iiat ?? token.iat ?? Math.floor(Date.now() / 1000);
  const left = start + REFRESH_TOKEN_CAP - Math.floor(Date.now() / 1000);
  return Math.max(1, Math.min(REFRESH_TOKEN_TTL, left));
}

/** RFC 8707: only the allow-listed resources; the access token for one is a JWT with that audience. */
function resourceServer(config: Config): (ctx: KoaContextWithOIDC, resource: string) => ResourceServer {
  return (_ctx, resource) => {
    if (!(config.oidcResources ?? []).includes(resource)) throw new errors.InvalidTarget(`resource ${resource} is not allowed`);
    return {
      scope: SUPPORTED_SCOPES.join(' '),
      audience: resource,
      accessTokenTTL: ACCESS_TOKEN_TTL,
      accessTokenFormat: 'jwt',
      jwt: { sign: { alg: 'EdDSA' } },
    };
  };
}

/** The signing key as the provider's key set: the newest key of `infra/identity/keys.ts`, so the JWKS route publishes it. */
function providerKeys(key: SigningKey): { keys: JsonWebKey[] } {
  return { keys: [{ ...key.privateKey.export({ format: 'jwk' }), kid: key.kid, alg: 'EdDSA', use: 'sig' }] };
}

/** Cookie keys the provider insists on (it sets no cookie here: it runs no sessions or interactions). */
function cookieKeys(config: Config): string[] {
  return [Buffer.from(hkdfSync('sha256', keySecret(config), 'dn42-control oidc-provider', 'cookie keys v1', 32)).toString('base64url')];
}

/**
 * Every setting of the provider, in one place. What is not listed here is
 * switched off: no provider login UI or sessions (the page is the login), no
 * logout page, PAR, DPoP, introspection, revocation, registration or device flow.
 */
export function providerConfiguration(deps: ProviderDeps, key: SigningKey): Configuration {
  const { config } = deps;
  return {
    adapter: eventStoreAdapter(deps),
    jwks: providerKeys(key) as Configuration['jwks'],
    findAccount: findAccount(deps),
    claims: CLAIMS_OF_SCOPE,
    scopes: [...SUPPORTED_SCOPES],
    // Scope claims go into the ID token too (the contract's dn42 claims live only there).
    conformIdTokenClaims: false,
    responseTypes: ['code'],
    pkce: { required: () => true },
    clientAuthMethods: ['client_secret_basic', 'client_secret_post', 'none'],
    clientDefaults: {
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      id_token_signed_response_alg: 'EdDSA',
      token_endpoint_auth_method: 'client_secret_basic',
    },
    enabledJWA: {
      idTokenSigningAlgValues: ['EdDSA'],
      clientAuthSigningAlgValues: [],
      userinfoSigningAlgValues: ['EdDSA'],
      requestObjectSigningAlgValues: ['EdDSA'],
      authorizationSigningAlgValues: ['EdDSA'],
      introspectionSigningAlgValues: ['EdDSA'],
    },
    features: {
      devInteractions: { enabled: false },
      rpInitiatedLogout: { enabled: false },
      pushedAuthorizationRequests: { enabled: false },
      dPoP: { enabled: false },
      userinfo: { enabled: true },
      resourceIndicators: { enabled: true, defaultResource: () => undefined, useGrantedResource: () => false, getResourceServerInfo: resourceServer(config) },
    },
    routes: PROVIDER_ROUTES,
    ttl: {
      AuthorizationCode: CODE_TTL,
      AccessToken: ACCESS_TOKEN_TTL,
      IdToken: ID_TOKEN_TTL,
      RefreshToken: refreshTokenTtl,
      Grant: REFRESH_TOKEN_CAP,
      Session: CODE_TTL,
      Interaction: CODE_TTL,
    },
    rotateRefreshToken: true,
    issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed('refresh_token'),
    // A browser app may call the token and UserInfo endpoints from the origin of one of its redirect URIs.
    clientBasedCORS: (_ctx, origin, client) => client.redirectUris?.some((uri) => new URL(uri).origin === origin) ?? false,
    cookies: { keys: cookieKeys(config) },
    renderError: async (ctx, out) => {
      ctx.type = 'json';
      ctx.body = out;
    },
  };
}
