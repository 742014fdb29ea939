/**
 * The rules of `/authorize` (document 1, Authorization page and OIDC), checked
 * where the page asks for its context and again when it posts the approval:
 * the client and its exact redirect URI first (a failure there is fatal: an
 * unverified return address is never used), then everything else, whose
 * failures go back to the verified redirect URI as OAuth errors.
 */

/** The scopes the provider knows, in the order discovery lists them. Others are ignored (OIDC Core §3.1.2.1). */
export const SUPPORTED_SCOPES = ['openid', 'profile', 'email', 'dn42'] as const;

/** The server-normalised request: what `authorize-context` echoes as `params` and `approve` takes back. */
export interface AuthorizationParams {
  client_id: string;
  redirect_uri: string;
  response_type: 'code';
  scope: string;
  code_challenge: string;
  code_challenge_method: 'S256';
  state?: string;
  nonce?: string;
  resource?: string[];
}

/** What the rules need to know of the application named by `client_id`. */
export interface ClientView {
  client_id: string;
  name: string;
  redirect_uris: readonly string[];
}

export type FatalError = 'invalid_client' | 'invalid_redirect_uri';
export type RedirectError =
  | 'invalid_request'
  | 'unsupported_response_type'
  | 'invalid_scope'
  | 'invalid_target'
  | 'login_required'
  | 'request_not_supported'
  | 'request_uri_not_supported';

export type AuthorizationCheck =
  | { result: 'fatal'; error: FatalError; detail: string }
  | { result: 'redirect'; redirect_uri: string; state?: string; error: RedirectError; detail: string }
  | { result: 'valid'; client: ClientView; params: AuthorizationParams };

/** Every value of each parameter, in order (a query string, or the `params` object posted back). */
export type ParamValues = ReadonlyMap<string, readonly string[]>;

/** Longest `state` or `nonce` echoed back; anything longer is refused rather than cut. */
const MAX_ECHOED_LENGTH = 1024;
/** base64url of a sha256 digest (RFC 7636 §4.2 with S256). */
const S256_CHALLENGE = /^[A-Za-z0-9_-]{43}$/;
/** Every parameter but `resource` (RFC 8707 makes it repeatable) must appear at most once. */
const REPEATABLE = new Set(['resource']);

export const paramValuesOfQuery = (query: string): ParamValues => {
  const values = new Map<string, string[]>();
  for (const [name, value] of new URLSearchParams(query)) values.set(name, [...(values.get(name) ?? []), value]);
  return values;
};

/** The `params` object posted back to approve, as parameter values. */
export const paramValuesOfParams = (params: Record<string, string | string[] | undefined>): ParamValues =>
  new Map(Object.entries(params).flatMap(([name, value]) => (value === undefined ? [] : [[name, Array.isArray(value) ? value : [value]] as const])));

/**
 * Checks a request against the application (`client` is what `client_id` names,
 * undefined when nothing) and the resource allow-list.
 */
export function checkAuthorizationRequest(values: ParamValues, client: ClientView | undefined, allowedResources: readonly string[]): AuthorizationCheck {
  const one = (name: string): string | undefined => values.get(name)?.[0];
  const clientId = values.get('client_id') ?? [];
  if (clientId.length !== 1 || !client || client.client_id !== clientId[0]) return { result: 'fatal', error: 'invalid_client', detail: 'unknown client_id' };
  const redirectUri = values.get('redirect_uri') ?? [];
  if (redirectUri.length !== 1 || !client.redirect_uris.includes(redirectUri[0])) {
    return { result: 'fatal', error: 'invalid_redirect_uri', detail: 'redirect_uri is not registered for this client' };
  }
  const state = values.get('state')?.length === 1 && one('state')!.length <= MAX_ECHOED_LENGTH ? one('state') : undefined;
  const refuse = (error: RedirectError, detail: string): AuthorizationCheck => ({
    result: 'redirect',
    redirect_uri: redirectUri[0],
    ...(state === undefined ? {} : { state }),
    error,
    detail,
  });
  const problem = firstProblem(values, allowedResources);
  if (problem) return refuse(problem[0], problem[1]);
  const resources = [...new Set(values.get('resource') ?? [])];
  const params: AuthorizationParams = {
    client_id: client.client_id,
    redirect_uri: redirectUri[0],
    response_type: 'code',
    scope: normalisedScope(one('scope')!),
    code_challenge: one('code_challenge')!,
    code_challenge_method: 'S256',
    ...(state === undefined ? {} : { state }),
    ...(one('nonce') === undefined ? {} : { nonce: one('nonce') }),
    ...(resources.length ? { resource: resources } : {}),
  };
  return { result: 'valid', client, params };
}

/** The first rule the request breaks, in the order a client would fix them. */
function firstProblem(values: ParamValues, allowedResources: readonly string[]): [RedirectError, string] | undefined {
  const one = (name: string): string | undefined => values.get(name)?.[0];
  for (const [name, given] of values) if (given.length > 1 && !REPEATABLE.has(name)) return ['invalid_request', `${name} given more than once`];
  if (values.has('request')) return ['request_not_supported', 'request objects are not supported'];
  if (values.has('request_uri')) return ['request_uri_not_supported', 'request_uri is not supported'];
  if (!one('response_type')) return ['invalid_request', 'response_type required'];
  if (one('response_type') !== 'code') return ['unsupported_response_type', 'only response_type=code is supported'];
  if ((one('response_mode') ?? 'query') !== 'query') return ['invalid_request', 'only response_mode=query is supported'];
  if (!one('code_challenge')) return ['invalid_request', 'code_challenge required (PKCE with S256)'];
  if (one('code_challenge_method') !== 'S256') return ['invalid_request', 'code_challenge_method must be S256'];
  if (!S256_CHALLENGE.test(one('code_challenge')!)) return ['invalid_request', 'code_challenge is not a base64url sha256 digest'];
  if (!(one('scope') ?? '').split(' ').includes('openid')) return ['invalid_scope', 'scope must contain openid'];
  for (const resource of values.get('resource') ?? []) {
    if (!allowedResources.includes(resource)) return ['invalid_target', `resource ${resource} is not allowed`];
  }
  for (const name of ['state', 'nonce'])
    if ((one(name)?.length ?? 0) > MAX_ECHOED_LENGTH) return ['invalid_request', `${name} longer than ${MAX_ECHOED_LENGTH} characters`];
  if ((one('prompt') ?? '').split(' ').includes('none'))
    return ['login_required', 'the login happens on the authorization page; prompt=none cannot be honoured'];
  return undefined;
}

/** Known scopes only, each once, in the order discovery lists them. */
function normalisedScope(scope: string): string {
  const asked = new Set(scope.split(' '));
  return SUPPORTED_SCOPES.filter((s) => asked.has(s)).join(' ');
}

/** The redirect URI with OAuth response parameters appended (RFC 6749 §4.1.2, RFC 9207 `iss`). */
export function redirectWith(redirectUri: string, fields: Record<string, string | undefined>): string {
  const url = new URL(redirectUri);
  for (const [name, value] of Object.entries(fields)) if (value !== undefined) url.searchParams.append(name, value);
  return url.href;
}
