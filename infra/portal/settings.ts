import { hkdfSync } from 'node:crypto';
import { sha256Hex } from '../../domain/sha256.js';
import type { Config } from '../config.js';
import { keySecret } from '../identity/keys.js';

/** Where and as whom the portal logs its users in. */
export interface PortalLoginSettings {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** Without a trailing slash; the callback sends the browser to `{portalUrl}/auth/complete`. */
  portalUrl: string;
  /** `{CONTROL_URL}/control/v1/autopeering/auth/callback`, as registered at the issuer. */
  redirectUri: string;
}

/** The login settings, or the names of the settings that are missing (the login endpoints then answer 503). */
export type PortalLogin = { configured: true; settings: PortalLoginSettings } | { configured: false; missing: string[] };

/** The portal's client at the identity service of this same process (`localPortalClient`). */
export interface LocalPortalClient {
  clientId: string;
  clientSecret: string;
  redirectUri: string;
}

const trimSlash = (url: string) => url.replace(/\/+$/, '');

export function portalRedirectUri(config: Pick<Config, 'controlUrl'>): string {
  return `${trimSlash(config.controlUrl)}/control/v1/autopeering/auth/callback`;
}

/**
 * The portal's confidential client at the local identity service, the same in
 * every instance and across restarts without storing its secret anywhere: the
 * secret is derived (HKDF) from the identity key secret and the redirect URI,
 * the client id from both. A new CONTROL_URL gives a new client.
 */
export function localPortalClient(config: Config): LocalPortalClient {
  const redirectUri = portalRedirectUri(config);
  const clientSecret = Buffer.from(hkdfSync('sha256', keySecret(config), 'dn42-control portal client', redirectUri, 32)).toString('base64url');
  const clientId = `portal-${sha256Hex(`${redirectUri}\n${clientSecret}`).slice(0, 24)}`;
  return { clientId, clientSecret, redirectUri };
}

/**
 * The portal login configuration. With `local` (this process serves the
 * identity role, PORTAL_CLIENT_ID and PORTAL_OIDC_ISSUER are unset) the local client and
 * IDENTITY_ISSUER serve, and the portal URL defaults to CONTROL_URL's
 * `/portal/`. Otherwise all four settings must be present.
 */
export function portalLogin(config: Config, local?: LocalPortalClient): PortalLogin {
  if (local && config.portalClientId === undefined && config.portalOidcIssuer === undefined) {
    return {
      configured: true,
      settings: {
        issuer: config.identityIssuer,
        clientId: local.clientId,
        clientSecret: local.clientSecret,
        portalUrl: trimSlash(config.portalUrl ?? `${trimSlash(config.controlUrl)}/portal/`),
        redirectUri: local.redirectUri,
      },
    };
  }
  const { portalOidcIssuer: issuer, portalClientId: clientId, portalClientSecret: clientSecret, portalUrl } = config;
  if (issuer === undefined || clientId === undefined || clientSecret === undefined || portalUrl === undefined) {
    const missing = Object.entries({ PORTAL_OIDC_ISSUER: issuer, PORTAL_CLIENT_ID: clientId, PORTAL_CLIENT_SECRET: clientSecret, PORTAL_URL: portalUrl })
      .filter(([, value]) => value === undefined)
      .map(([name]) => name);
    return { configured: false, missing };
  }
  return { configured: true, settings: { issuer, clientId, clientSecret, portalUrl: trimSlash(portalUrl), redirectUri: portalRedirectUri(config) } };
}

/** The issuer whose key set verifies `/autopeering/session` JWTs, or undefined (503). */
export function sessionIssuer(config: Config, local: boolean): string | undefined {
  return config.portalOidcIssuer ?? (local ? config.identityIssuer : undefined);
}
