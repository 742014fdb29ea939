import { errors, type Adapter, type AdapterFactory, type AdapterPayload } from 'oidc-provider';
import { AlreadyConsumed } from '../../../domain/identity/oidc-storage.js';
import { NotFound } from '../../../domain/errors.js';
import { sha256Hex } from '../../../domain/sha256.js';
import { consumeModel, destroyModel, revokeGrant, storeModel, type OidcStorageDeps } from '../../../commands/identity/oidc-storage.js';
import { activeClient, findModel, findModelBy } from '../../../projections/oidc/queries.js';
import { clientMetadata } from './clients.js';
import { oidcMetadata } from './metadata.js';

/**
 * Models found by `uid` (Session) or `userCode` (device flow) keep their `jti`
 * in the stored payload: those lookups have no id to restore it from. Neither
 * model is ever created by this provider (no provider sessions, no device flow).
 */
const KEEPS_JTI = new Set(['Session', 'DeviceCode']);

/**
 * The oidc-provider Adapter over the event store, one instance per model name.
 * Writes append to `oidc-<Model>-<sha256(id)>`; reads come from the inline `oidc`
 * projection, so every instance of the service sees the same grants, codes and
 * tokens, and they outlive restarts.
 */
class EventStoreAdapter implements Adapter {
  constructor(
    private readonly model: string,
    private readonly deps: OidcStorageDeps,
  ) {}

  async upsert(id: string, payload: AdapterPayload, expiresIn?: number): Promise<void> {
    const { jti: _jti, ...kept } = payload;
    const exp = typeof payload.exp === 'number' ? payload.exp * 1000 : expiresIn ? Date.now() + expiresIn * 1000 : undefined;
    await storeModel(
      this.deps,
      {
        model: this.model,
        key: sha256Hex(id),
        payload: KEEPS_JTI.has(this.model) ? { ...kept, jti: id } : kept,
        expires_at: exp === undefined ? null : new Date(exp).toISOString(),
        // A grant is bound to itself, so revoking a grant's tokens takes the grant along.
        grant_id: this.model === 'Grant' ? id : (payload.grantId ?? null),
        client_id: payload.clientId ?? null,
        uid_key: payload.uid ? sha256Hex(payload.uid) : null,
        user_code_key: payload.userCode ? sha256Hex(payload.userCode) : null,
      },
      oidcMetadata(this.deps.now(), payload.clientId),
    );
  }

  async find(id: string): Promise<AdapterPayload | undefined> {
    const row = await findModel(this.deps.pool, this.model, sha256Hex(id));
    return row && ({ ...row.payload, jti: id } as AdapterPayload);
  }

  async findByUid(uid: string): Promise<AdapterPayload | undefined> {
    return (await findModelBy(this.deps.pool, this.model, 'uid_key', sha256Hex(uid)))?.payload as AdapterPayload | undefined;
  }

  async findByUserCode(userCode: string): Promise<AdapterPayload | undefined> {
    return (await findModelBy(this.deps.pool, this.model, 'user_code_key', sha256Hex(userCode)))?.payload as AdapterPayload | undefined;
  }

  /**
   * Single use, enforced by the stream: the provider checks `consumed` before it
   * calls this, but two requests can pass that check together. The loser gets
   * `invalid_grant`, and (as for a replay) the grant's tokens are revoked.
   */
  async consume(id: string): Promise<void> {
    const key = sha256Hex(id);
    const payload = (await findModel(this.deps.pool, this.model, key))?.payload;
    const metadata = oidcMetadata(this.deps.now(), payload?.clientId);
    try {
      await consumeModel(this.deps, this.model, key, metadata);
    } catch (err) {
      if (err instanceof AlreadyConsumed) {
        if (typeof payload?.grantId === 'string') await revokeGrant(this.deps, payload.grantId, metadata);
        throw new errors.InvalidGrant(`${this.model} already consumed`);
      }
      if (err instanceof NotFound) throw new errors.InvalidGrant(`${this.model} not found`);
      throw err;
    }
  }

  async destroy(id: string): Promise<void> {
    await destroyModel(this.deps, this.model, sha256Hex(id), oidcMetadata(this.deps.now()));
  }

  async revokeByGrantId(grantId: string): Promise<void> {
    await revokeGrant(this.deps, grantId, oidcMetadata(this.deps.now()), this.model);
  }
}

/**
 * Applications are not stored through the provider (no dynamic registration):
 * they are registered by the administration API and read from the projection.
 */
class ClientAdapter implements Adapter {
  constructor(private readonly deps: OidcStorageDeps) {}

  async find(id: string): Promise<AdapterPayload | undefined> {
    const client = await activeClient(this.deps.pool, id);
    return client && (clientMetadata(client) as AdapterPayload);
  }

  private refuse(): never {
    throw new Error('OAuth applications are managed through /api/v1/admin/oauth-clients');
  }

  upsert = async (): Promise<void> => this.refuse();
  findByUid = async (): Promise<undefined> => this.refuse();
  findByUserCode = async (): Promise<undefined> => this.refuse();
  consume = async (): Promise<void> => this.refuse();
  destroy = async (): Promise<void> => this.refuse();
  revokeByGrantId = async (): Promise<void> => this.refuse();
}

/** The adapter factory the provider configuration takes. */
export function eventStoreAdapter(deps: OidcStorageDeps): AdapterFactory {
  return (name) => (name === 'Client' ? new ClientAdapter(deps) : new EventStoreAdapter(name, deps));
}
