import { foldMitigations, MITIGATIONS_STREAM, type MitigationEvent } from '../../domain/fleet-ops/mitigation-log.js';
import { blockedBy } from '../../domain/fleet-ops/prefix-block.js';
import type { Queryable } from '../../infra/db/pool.js';
import type { EventStore } from '../../infra/eventstore/types.js';
import { disabledSessions, nodeTemplates } from '../../projections/fleet/mitigation-queries.js';
import { load } from '../handle.js';
import { deferredOf, type DeferredNode } from './prefix-mitigations.js';

export interface MitigationsView {
  /** Every blocked prefix (canonical, sorted) with the nodes carrying it and those whose agent cannot take it yet. */
  blocked_prefixes: { prefix: string; nodes: string[]; deferred: DeferredNode[] }[];
  /** Every disabled BGP session; `by_mitigation` when a peer-disable turned it off (peer-enable restores it). */
  disabled_sessions: { id: number; node_id: string; name: string; remote_asn: number; enabled: false; by_mitigation: boolean }[];
}

/** `GET /fleet/mitigations`, from the fleet read model and the mitigation log. */
export async function listMitigations(db: Queryable, store: EventStore): Promise<MitigationsView> {
  const byPrefix = new Map<string, string[]>();
  for (const { node_id, base_template } of await nodeTemplates(db)) {
    for (const prefix of blockedBy(base_template)) byPrefix.set(prefix, [...(byPrefix.get(prefix) ?? []), node_id]);
  }
  const blocked_prefixes = [];
  for (const prefix of [...byPrefix.keys()].sort()) {
    const nodes = byPrefix.get(prefix)!;
    blocked_prefixes.push({ prefix, nodes, deferred: await deferredOf(db, nodes) });
  }
  const tracked = foldMitigations((await load(store, MITIGATIONS_STREAM)).events as MitigationEvent[]);
  const mine = new Set([...tracked.values()].flat().map((s) => `${s.node_id}/${s.session_id}`));
  const disabled_sessions = (await disabledSessions(db)).map((s) => ({ ...s, enabled: false as const, by_mitigation: mine.has(`${s.node_id}/${s.id}`) }));
  return { blocked_prefixes, disabled_sessions };
}
