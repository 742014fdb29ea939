import { timingSafeEqual } from 'node:crypto';
import type Provider from 'oidc-provider';
import type { ClientMetadata } from 'oidc-provider';
import { sha256Hex } from '../../../domain/sha256.js';
import type { ClientRow } from '../../../projections/oidc/queries.js';

/**
 * An application as provider client metadata. Authorization-code flow only;
 * confidential clients authenticate with their secret (basic or post, which the
 * provider treats as one), public ones with none (PKCE is mandatory for all).
 * `client_secret` holds the sha256 of the secret, never the secret: see
 * `compareSecretsByDigest`.
 */
export function clientMetadata(client: ClientRow): ClientMetadata {
  return {
    client_id: client.client_id,
    client_name: client.name,
    redirect_uris: client.redirect_uris,
    response_types: ['code'],
    grant_types: ['authorization_code', 'refresh_token'],
    token_endpoint_auth_method: client.confidential ? 'client_secret_basic' : 'none',
    id_token_signed_response_alg: 'EdDSA',
    ...(client.confidential && client.secret_sha256 ? { client_secret: client.secret_sha256 } : {}),
  };
}

/**
 * Only the sha256 of a client secret is stored, so the provider must compare
 * digests: its `compareClientSecret` (the one check behind client_secret_basic
 * and client_secret_post) is replaced, on this provider's own Client class, by a
 * constant-time comparison of the presented secret's digest with the stored one.
 * Nothing else may read `client_secret` as a key: HS* algorithms, client_secret_jwt
 * and encryption are all disabled in the configuration.
 */
export function compareSecretsByDigest(provider: Provider): void {
  Object.defineProperty(provider.Client.prototype, 'compareClientSecret', {
    value(this: { clientSecret?: string }, actual: string): boolean {
      const stored = Buffer.from(this.clientSecret ?? '', 'utf8');
      const presented = Buffer.from(sha256Hex(actual), 'utf8');
      return stored.length === presented.length && timingSafeEqual(stored, presented);
    },
  });
}
