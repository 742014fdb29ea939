import { fold } from '../../domain/decider.js';
import { approvalStream, type ApprovalRecord, type AuthorizationApproved } from '../../domain/identity/oauth-approval.js';
import {
  decideConsume,
  evolveOidcModel,
  oidcModelStream,
  type OidcModelEvent,
  type OidcModelRevoked,
  type OidcModelState,
  type StoredModel,
} from '../../domain/identity/oidc-storage.js';
import type { EventMetadata, EventStore } from '../../infra/eventstore/types.js';
import type { Pool } from '../../infra/db/pool.js';
import { findModel, modelsBoundTo } from '../../projections/oidc/queries.js';
import { execute } from '../handle.js';

/**
 * The writes behind the OIDC provider's Adapter and the approval page. Each
 * appends to the model instance's own stream; the inline `oidc` projection
 * answers the reads. `settle` waits for that projection where it does not run
 * inside the append (KurrentDB).
 */
export interface OidcStorageDeps {
  store: EventStore;
  pool: Pool;
  now: () => Date;
  settle?: () => Promise<void>;
}

async function append(
  deps: OidcStorageDeps,
  writes: { streamId: string; events: OidcModelEvent[] | AuthorizationApproved[] }[],
  metadata: EventMetadata,
): Promise<void> {
  if (writes.length === 0) return;
  await deps.store.append(
    writes.map((w) => ({ streamId: w.streamId, expected: 'any' as const, events: w.events })),
    metadata,
  );
  await deps.settle?.();
}

/** Saves (or replaces) a model instance: the provider's upsert. */
export function storeModel(deps: OidcStorageDeps, stored: StoredModel, metadata: EventMetadata): Promise<void> {
  return append(deps, [{ streamId: oidcModelStream(stored.model, stored.key), events: [{ type: 'OidcModelStored', data: stored }] }], metadata);
}

/**
 * Marks a code or refresh token used. Throws `AlreadyConsumed` when another
 * request consumed it first (also between this one's read and its append), and
 * `NotFound` when it is gone.
 */
export async function consumeModel(deps: OidcStorageDeps, model: string, key: string, metadata: EventMetadata): Promise<void> {
  const streamId = oidcModelStream(model, key);
  await execute(
    deps.store,
    [streamId],
    (streams) => {
      const state = fold<OidcModelEvent, OidcModelState>(
        { initialState: () => ({ status: 'Empty' }), evolve: evolveOidcModel },
        streams[streamId].events as OidcModelEvent[],
      );
      return { writes: [{ streamId, events: decideConsume(state, model, key, deps.now()) }], result: undefined };
    },
    metadata,
  );
  await deps.settle?.();
}

/** Removes a model instance the provider destroys; nothing is written for one that is not stored. */
export async function destroyModel(deps: OidcStorageDeps, model: string, key: string, metadata: EventMetadata): Promise<void> {
  if (!(await findModel(deps.pool, model, key))) return;
  const at = deps.now().toISOString();
  await append(deps, [{ streamId: oidcModelStream(model, key), events: [{ type: 'OidcModelDestroyed', data: { model, key, at } }] }], metadata);
}

/** The revocation events of every instance bound to a grant (one model, or all) or to an application. */
export async function revocationsOf(
  deps: OidcStorageDeps,
  bound: Parameters<typeof modelsBoundTo>[1],
): Promise<{ streamId: string; events: [OidcModelRevoked] }[]> {
  const at = deps.now().toISOString();
  const reason = 'clientId' in bound ? 'client' : 'grant';
  return (await modelsBoundTo(deps.pool, bound)).map(({ model, key }) => ({
    streamId: oidcModelStream(model, key),
    events: [{ type: 'OidcModelRevoked', data: { model, key, at, reason } }],
  }));
}

/** Revokes, in one append, every instance bound to a grant (code replay, refresh token reuse). */
export async function revokeGrant(deps: OidcStorageDeps, grantId: string, metadata: EventMetadata, model?: string): Promise<void> {
  await append(deps, await revocationsOf(deps, { grantId, model }), metadata);
}

/** Records who approved a grant; written before the grant and its code. */
export function recordApproval(deps: OidcStorageDeps, approval: ApprovalRecord, metadata: EventMetadata): Promise<void> {
  return append(deps, [{ streamId: approvalStream(approval.grant_id), events: [{ type: 'AuthorizationApproved', data: approval }] }], metadata);
}
