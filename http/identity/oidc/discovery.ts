/**
 * The discovery document as the contract lists it (document 1, Tokens and
 * claims: discovery values). The provider writes most of it; this pins what it
 * would say otherwise:
 * - every endpoint URL from the configured issuer (the provider derives them
 *   from the request's Host header), `authorization_endpoint` being the page;
 * - `response_modes_supported` is query only (the page redirects, nothing else);
 * - `resource_indicators_supported` (RFC 8707), which the provider does not announce;
 * - no signing algorithms for client assertions: no JWT client authentication.
 */
export function contractDiscovery(
  document: Record<string, unknown>,
  issuer: string,
  routes: { authorization: string; token: string; userinfo: string; jwks: string },
): Record<string, unknown> {
  const base = issuer.replace(/\/+$/, '');
  const { token_endpoint_auth_signing_alg_values_supported: _jwtAuth, ...kept } = document;
  return {
    ...kept,
    issuer,
    authorization_endpoint: base + routes.authorization,
    token_endpoint: base + routes.token,
    userinfo_endpoint: base + routes.userinfo,
    jwks_uri: base + routes.jwks,
    response_modes_supported: ['query'],
    resource_indicators_supported: true,
  };
}
