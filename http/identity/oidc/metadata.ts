import { AsyncLocalStorage } from 'node:async_hooks';
import type { EventMetadata } from '../../../infra/eventstore/types.js';

/**
 * The event metadata of the request the provider is serving. The provider calls
 * its Adapter with ids and payloads only; the bridge (and the approval) run the
 * provider inside `withOidcMetadata`, so the adapter's events still say which
 * request, from where, and on whose behalf.
 */
const current = new AsyncLocalStorage<EventMetadata>();

export function withOidcMetadata<T>(metadata: EventMetadata, work: () => T): T {
  return current.run(metadata, work);
}

/** The metadata of the request in progress; without one, or without an actor, the application acts. */
export function oidcMetadata(now: Date, clientId?: unknown): EventMetadata {
  const found = current.getStore();
  const fallback = typeof clientId === 'string' ? `oauth-client:${clientId}` : 'oidc-provider';
  const actor = found && found.actor !== 'anonymous' ? found.actor : fallback;
  return { ...found, actor, recordedAt: now.toISOString() };
}
