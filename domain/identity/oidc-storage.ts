import type { DomainEvent } from '../decider.js';
import { Conflict, NotFound } from '../errors.js';

/**
 * What the OIDC provider stores (grants, authorization codes, access and refresh
 * tokens), as events: one stream per model instance, `oidc-<Model>-<key>`, where
 * `key` is the sha256 of the instance id. For opaque tokens the id IS the token,
 * so neither stream ids nor payloads ever hold it (the payload's `jti` is
 * dropped and restored on read).
 */

/** `OidcModelStored` data: the provider's payload without `jti`, plus the lookup columns. */
export interface StoredModel {
  model: string;
  key: string;
  payload: Record<string, unknown>;
  /** ISO time after which the provider no longer accepts it; null: does not expire. */
  expires_at: string | null;
  grant_id: string | null;
  client_id: string | null;
  /** sha256 of the session uid (Session model) and of the user code (device flow), when present. */
  uid_key: string | null;
  user_code_key: string | null;
}

export type OidcModelStored = DomainEvent<'OidcModelStored', StoredModel>;
export type OidcModelConsumed = DomainEvent<'OidcModelConsumed', { model: string; key: string; at: string }>;
export type OidcModelDestroyed = DomainEvent<'OidcModelDestroyed', { model: string; key: string; at: string }>;
/** Revoked with its whole grant (code replay, refresh token reuse) or with its application (deregistration). */
export type OidcModelRevoked = DomainEvent<'OidcModelRevoked', { model: string; key: string; at: string; reason: 'grant' | 'client' }>;
export type OidcModelEvent = OidcModelStored | OidcModelConsumed | OidcModelDestroyed | OidcModelRevoked;

export const OIDC_MODEL_EVENTS: readonly OidcModelEvent['type'][] = ['OidcModelStored', 'OidcModelConsumed', 'OidcModelDestroyed', 'OidcModelRevoked'];

export const oidcModelStream = (model: string, key: string): string => `oidc-${model}-${key}`;

export type OidcModelState = { status: 'Empty' } | { status: 'Stored' } | { status: 'Consumed'; at: string } | { status: 'Gone' };

export function evolveOidcModel(_state: OidcModelState, event: OidcModelEvent): OidcModelState {
  switch (event.type) {
    case 'OidcModelStored':
      return event.data.payload.consumed ? { status: 'Consumed', at: String(event.data.payload.consumed) } : { status: 'Stored' };
    case 'OidcModelConsumed':
      return { status: 'Consumed', at: event.data.at };
    case 'OidcModelDestroyed':
    case 'OidcModelRevoked':
      return { status: 'Gone' };
    default: {
      const _never: never = event;
      return _never;
    }
  }
}

/** A second consumption of a single-use code or refresh token: the one who lost the race is refused. */
export class AlreadyConsumed extends Conflict {}

/**
 * Consuming is the one decision of a model stream: only a stored, unconsumed
 * instance can be consumed. Two token requests racing with the same code both
 * read "stored"; the append's expected version lets only one of them through,
 * and the retry of the other finds it consumed.
 */
export function decideConsume(state: OidcModelState, model: string, key: string, now: Date): OidcModelConsumed[] {
  switch (state.status) {
    case 'Stored':
      return [{ type: 'OidcModelConsumed', data: { model, key, at: now.toISOString() } }];
    case 'Consumed':
      throw new AlreadyConsumed(`${model} already consumed`);
    case 'Empty':
    case 'Gone':
      throw new NotFound(`unknown ${model}`);
    default: {
      const _never: never = state;
      return _never;
    }
  }
}
