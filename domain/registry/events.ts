import type { DomainEvent } from '../decider.js';

export const REGISTRY_SYNC_STREAM = 'registry-sync';

/**
 * A sync loaded a commit of the registry into the replica (stream `registry-sync`).
 * The replica's tables are a cache of the upstream; these events are the history of
 * which commits were loaded, when, and what they held.
 */
export type RegistrySynced = DomainEvent<
  'RegistrySynced',
  {
    commit: string;
    previous_commit: string | null;
    /** Objects per class, plus `malformed`. */
    counts: Record<string, number>;
    duration_ms: number;
    forced: boolean;
  }
>;
