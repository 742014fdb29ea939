import * as oidc from 'openid-client';
import { expectResponse } from '../../../support/http.js';
import { queryOf, registerClient, sshSession, startOidc, type OidcFixture, type RegisteredClient } from '../../../support/oidc.js';

/** A relying party's view of the service, by discovery, authenticating as `client` registered it. */
export async function rpConfig(
  f: OidcFixture,
  client: RegisteredClient,
  auth: 'basic' | 'post' | 'none' = client.client_secret ? 'basic' : 'none',
): Promise<oidc.Configuration> {
  const clientAuth =
    auth === 'basic' ? oidc.ClientSecretBasic(client.client_secret) : auth === 'post' ? oidc.ClientSecretPost(client.client_secret) : oidc.None();
  // openid-client refuses plain http unless told: the spec issuer is http://localhost.
  return oidc.discovery(new URL(f.issuer), client.client_id, undefined, clientAuth, { execute: [oidc.allowInsecureRequests] });
}

export interface PendingAuthorization {
  url: URL;
  verifier: string;
  state: string;
  nonce: string;
}

/** An authorization URL the way a third-party app builds it: PKCE S256, state, nonce, optional resources. */
export async function authorizationUrl(
  config: oidc.Configuration,
  redirectUri: string,
  options: { scope?: string; resource?: string[] } = {},
): Promise<PendingAuthorization> {
  const verifier = oidc.randomPKCECodeVerifier();
  const state = oidc.randomState();
  const nonce = oidc.randomNonce();
  const params = new URLSearchParams({
    redirect_uri: redirectUri,
    scope: options.scope ?? 'openid profile email dn42',
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state,
    nonce,
  });
  for (const r of options.resource ?? []) params.append('resource', r);
  return { url: oidc.buildAuthorizationUrl(config, params), verifier, state, nonce };
}

/**
 * What the page does with an authorization URL once the user is verified:
 * forwards its query to authorize-context, then posts `params` back to approve
 * with the session. Returns the `redirect_to` of approve.
 */
export async function approveAsPage(f: OidcFixture, url: URL, sessionToken: string, deny = false): Promise<URL> {
  const context = await f.client.get(`/api/v1/oauth/authorize-context?${queryOf(url)}`);
  expectResponse(context).status(200);
  if (!context.body.params) throw new Error(`authorize-context did not accept the request: ${context.text}`);
  const approve = await f.client.post('/api/v1/oauth/approve', { ...context.body.params, deny }, { token: sessionToken });
  expectResponse(approve).status(200);
  return new URL(approve.body.redirect_to);
}

/** The whole front channel and the code exchange: approve as the page would, redeem the code. */
export async function signIn(
  f: OidcFixture,
  config: oidc.Configuration,
  redirectUri: string,
  sessionToken: string,
  options: { scope?: string; resource?: string[]; tokenResource?: string } = {},
): Promise<oidc.TokenEndpointResponse & oidc.TokenEndpointResponseHelpers> {
  const pending = await authorizationUrl(config, redirectUri, options);
  const callback = await approveAsPage(f, pending.url, sessionToken);
  return oidc.authorizationCodeGrant(
    config,
    callback,
    { pkceCodeVerifier: pending.verifier, expectedState: pending.state, expectedNonce: pending.nonce },
    options.tokenResource ? { resource: options.tokenResource } : undefined,
  );
}

/** The token endpoint called by hand (to see refusals as the server words them), of `baseUrl` when another instance is meant. */
export async function tokenRequest(
  f: OidcFixture,
  client: RegisteredClient,
  form: Record<string, string>,
  baseUrl = f.url,
): Promise<{ status: number; body: Record<string, string> }> {
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' };
  const body = new URLSearchParams(form);
  if (client.client_secret)
    headers.authorization = `Basic ${Buffer.from(`${encodeURIComponent(client.client_id)}:${encodeURIComponent(client.client_secret)}`).toString('base64')}`;
  else body.set('client_id', client.client_id);
  const res = await fetch(`${baseUrl}/token`, { method: 'POST', headers, body });
  return { status: res.status, body: (await res.json()) as Record<string, string> };
}

/** What `useConfidentialApp` holds for the tests of a suite. */
export interface ConfidentialApp {
  readonly f: OidcFixture;
  readonly app: RegisteredClient;
  readonly config: oidc.Configuration;
  /** The session JWT of GAMMA-MNT (ssh verification). */
  readonly session: string;
  /** Approves a fresh request as the page would; returns the code's form for the token endpoint. */
  codeForm(): Promise<Record<string, string>>;
  /** `tokenRequest` as the app, of `baseUrl` when another instance is meant. */
  token(form: Record<string, string>, baseUrl?: string): ReturnType<typeof tokenRequest>;
  /** `signIn` as the app, with the session. */
  signIn(): ReturnType<typeof signIn>;
}

/**
 * Mocha hooks for a suite that redeems codes by hand at the token endpoint: a
 * fresh service (`startOidc`), one confidential app at `redirectUri`, its
 * relying-party view and an ssh session, the service closed after the suite.
 * Read the fields inside tests (they are set in `before`).
 */
export function useConfidentialApp(redirectUri: string): ConfidentialApp {
  const handle = {} as { -readonly [K in keyof ConfidentialApp]: ConfidentialApp[K] };
  handle.codeForm = async () => {
    const pending = await authorizationUrl(handle.config, redirectUri);
    const callback = await approveAsPage(handle.f, pending.url, handle.session);
    return { grant_type: 'authorization_code', code: callback.searchParams.get('code')!, redirect_uri: redirectUri, code_verifier: pending.verifier };
  };
  handle.token = (form, baseUrl) => tokenRequest(handle.f, handle.app, form, baseUrl);
  handle.signIn = () => signIn(handle.f, handle.config, redirectUri, handle.session);
  before(async () => {
    handle.f = await startOidc();
    handle.app = await registerClient(handle.f, { redirect_uris: [redirectUri], confidential: true });
    handle.config = await rpConfig(handle.f, handle.app);
    handle.session = (await sshSession(handle.f)).token;
  });
  after(async () => {
    await handle.f?.done();
  });
  return handle;
}
