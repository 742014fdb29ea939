import { fileURLToPath } from 'node:url';
import type { AuthorizationApproved } from '../../domain/identity/oauth-approval.js';
import { OAUTH_CLIENT_EVENTS, type OAuthClientEvent } from '../../domain/identity/oauth-clients.js';
import { OIDC_MODEL_EVENTS, type OidcModelEvent } from '../../domain/identity/oidc-storage.js';
import type { TransactionContext } from '../../infra/eventstore/types.js';
import type { Projection } from '../runtime/projection.js';

type OidcEvent = OidcModelEvent | OAuthClientEvent | AuthorizationApproved;

/**
 * The OIDC provider's storage, its applications and the approvals behind its
 * grants. Inline: the provider reads a code right after the approval saved it,
 * and a token exchange must see the consumption of the one before it.
 */
export const oidcProjection: Projection = {
  name: 'oidc',
  mode: 'inline',
  handles: [...OIDC_MODEL_EVENTS, ...OAUTH_CLIENT_EVENTS, 'AuthorizationApproved'],
  tables: ['oidc_approvals', 'oidc_models', 'oauth_clients'],
  migrations: { name: 'oidc', dir: fileURLToPath(new URL('./migrations', import.meta.url)) },
  async apply(tx, recorded) {
    await applyOidcEvent(tx, { type: recorded.type, data: recorded.data } as OidcEvent);
  },
};

async function applyOidcEvent(tx: TransactionContext, event: OidcEvent): Promise<void> {
  switch (event.type) {
    case 'OidcModelStored': {
      const d = event.data;
      const consumed = typeof d.payload.consumed === 'number' ? new Date(d.payload.consumed * 1000) : null;
      await tx.query(
        `INSERT INTO oidc_models (model, key, payload, grant_id, client_id, uid_key, user_code_key, expires_at, consumed_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
         ON CONFLICT (model, key) DO UPDATE SET payload = $3, grant_id = $4, client_id = $5, uid_key = $6, user_code_key = $7, expires_at = $8, consumed_at = $9`,
        [d.model, d.key, d.payload, d.grant_id, d.client_id, d.uid_key, d.user_code_key, d.expires_at, consumed],
      );
      return;
    }
    case 'OidcModelConsumed': {
      const at = new Date(event.data.at);
      // The provider reads `consumed` (epoch seconds) from the payload itself.
      await tx.query(`UPDATE oidc_models SET consumed_at = $3, payload = payload || jsonb_build_object('consumed', $4::bigint) WHERE model = $1 AND key = $2`, [
        event.data.model,
        event.data.key,
        at,
        Math.floor(at.getTime() / 1000),
      ]);
      return;
    }
    case 'OidcModelDestroyed':
    case 'OidcModelRevoked':
      await tx.query(`DELETE FROM oidc_models WHERE model = $1 AND key = $2`, [event.data.model, event.data.key]);
      return;
    case 'OAuthClientRegistered': {
      const c = event.data;
      await tx.query(`INSERT INTO oauth_clients (client_id, name, redirect_uris, confidential, secret_sha256, registered_at) VALUES ($1, $2, $3, $4, $5, $6)`, [
        c.client_id,
        c.name,
        c.redirect_uris,
        c.confidential,
        c.secret_sha256,
        c.registered_at,
      ]);
      return;
    }
    case 'OAuthClientDeregistered':
      await tx.query(`UPDATE oauth_clients SET deregistered_at = $2 WHERE client_id = $1`, [event.data.client_id, event.data.at]);
      return;
    case 'AuthorizationApproved': {
      const a = event.data;
      await tx.query(
        `INSERT INTO oidc_approvals (grant_id, client_id, sub, mntner, asn, method, scope, resource, redirect_uri, approved_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
        [a.grant_id, a.client_id, a.sub, a.mntner, a.asn, a.method, a.scope, a.resource, a.redirect_uri, a.at],
      );
      return;
    }
    default: {
      const _never: never = event;
      return _never;
    }
  }
}
