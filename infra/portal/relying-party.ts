import * as oidc from 'openid-client';
import type { Logger } from '../logger.js';
import type { PortalLoginSettings } from './settings.js';

/** Scopes the portal asks for: the `dn42` claim (ASN, maintainer, route, route6) is all it needs. */
export const PORTAL_SCOPE = 'openid dn42';
/** Seconds the portal waits for the identity service per request. */
const TIMEOUT_SECONDS = 10;

/** The identity service could not be reached or answered with a server error. */
export class ProviderUnavailable extends Error {
  constructor(cause: unknown) {
    super('identity service unavailable', { cause });
    this.name = 'ProviderUnavailable';
  }
}

/** The identity service refused a grant or token (`invalid_grant`, `invalid_token`): only a new login helps. */
export class UpstreamRefused extends Error {
  constructor(
    readonly error: string,
    cause: unknown,
  ) {
    super(`identity service refused: ${error}`, { cause });
    this.name = 'UpstreamRefused';
  }
}

export interface Checks {
  state: string;
  nonce: string;
  codeVerifier: string;
}

export interface GrantedTokens {
  accessToken: string;
  /** From `expires_in`; null when the provider named no lifetime. */
  expiresInSeconds: number | null;
  refreshToken: string | null;
}

/**
 * The portal as an OpenID Connect relying party of the identity service
 * (openid-client): discovery once (again after a failure), authorization URLs
 * with PKCE S256, state and nonce, the code exchange with the ID token checked
 * (signature against the JWKS, issuer, audience, nonce), UserInfo and refresh.
 * The client authenticates with its secret (client_secret_basic).
 */
export class PortalRelyingParty {
  private discovered: Promise<oidc.Configuration> | undefined;

  constructor(
    readonly settings: PortalLoginSettings,
    private readonly log: Logger,
  ) {}

  private configuration(): Promise<oidc.Configuration> {
    const { issuer, clientId, clientSecret } = this.settings;
    this.discovered ??= oidc
      .discovery(new URL(issuer), clientId, undefined, oidc.ClientSecretBasic(clientSecret), {
        // A plain-http issuer is a loopback development set-up (npm start).
        execute: issuer.startsWith('http:') ? [oidc.allowInsecureRequests] : [],
        timeout: TIMEOUT_SECONDS,
      })
      .catch((err: unknown) => {
        this.discovered = undefined;
        this.log.warn({ err, issuer }, 'portal login: OIDC discovery failed');
        throw new ProviderUnavailable(err);
      });
    return this.discovered;
  }

  async authorizationUrl(checks: Checks): Promise<URL> {
    const config = await this.configuration();
    return oidc.buildAuthorizationUrl(config, {
      redirect_uri: this.settings.redirectUri,
      scope: PORTAL_SCOPE,
      code_challenge: await oidc.calculatePKCECodeChallenge(checks.codeVerifier),
      code_challenge_method: 'S256',
      state: checks.state,
      nonce: checks.nonce,
    });
  }

  /**
   * Redeems the code of a callback (`search`: its query string as received; the
   * redirect URI sent along is the registered one, not the request's Host).
   * Returns the tokens and the verified ID token claims.
   */
  async redeem(search: string, checks: Checks): Promise<{ tokens: GrantedTokens; claims: Record<string, unknown> }> {
    const config = await this.configuration();
    const callback = new URL(this.settings.redirectUri);
    callback.search = search;
    const response = await upstream(() =>
      oidc.authorizationCodeGrant(config, callback, {
        pkceCodeVerifier: checks.codeVerifier,
        expectedState: checks.state,
        expectedNonce: checks.nonce,
        idTokenExpected: true,
      }),
    );
    return { tokens: grantedTokens(response), claims: { ...(response.claims() ?? {}) } };
  }

  /** The live claims of UserInfo for an access token of subject `sub`. */
  async userinfo(accessToken: string, sub: string): Promise<Record<string, unknown>> {
    const config = await this.configuration();
    return { ...(await upstream(() => oidc.fetchUserInfo(config, accessToken, sub))) };
  }

  /** A new access token (and the rotated refresh token) for a refresh token. */
  async refresh(refreshToken: string): Promise<GrantedTokens> {
    const config = await this.configuration();
    return grantedTokens(await upstream(() => oidc.refreshTokenGrant(config, refreshToken)));
  }
}

function grantedTokens(response: oidc.TokenEndpointResponse): GrantedTokens {
  return {
    accessToken: response.access_token,
    expiresInSeconds: typeof response.expires_in === 'number' ? response.expires_in : null,
    refreshToken: response.refresh_token ?? null,
  };
}

/**
 * Runs a call to the identity service: an OAuth refusal becomes `UpstreamRefused`,
 * a network failure or a server error `ProviderUnavailable`; anything else
 * (a failed ID token check, a state or nonce mismatch) is thrown as it is.
 */
async function upstream<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    if (err instanceof oidc.ResponseBodyError) {
      if (err.status >= 500) throw new ProviderUnavailable(err);
      throw new UpstreamRefused(err.error, err);
    }
    if (err instanceof oidc.WWWAuthenticateChallengeError) {
      if (err.status >= 500) throw new ProviderUnavailable(err);
      throw new UpstreamRefused(err.cause[0]?.parameters.error ?? 'invalid_token', err);
    }
    if (err instanceof TypeError || (err instanceof Error && (err.name === 'AbortError' || err.name === 'TimeoutError'))) throw new ProviderUnavailable(err);
    throw err;
  }
}
