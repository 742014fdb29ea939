import type { DomainEvent } from '../../domain/decider.js';
import { nodeDecider } from '../../domain/node/decide.js';
import { nodeStream, type NodeEvent } from '../../domain/node/events.js';
import type { LiveNode, NodeState } from '../../domain/node/state.js';
import type { EventMetadata } from '../../infra/eventstore/types.js';
import type { Delivery, DoorbellEvent } from '../../domain/doorbell.js';
import { listNodes } from '../../projections/fleet/queries.js';
import { FLEET_LOCK, FleetLoader, hasWriterLocks, publication, TOPOLOGY_STREAM, type FleetDeps, type Published } from '../fleet-write.js';
import { execute, observedLoads, type LoadMore } from '../handle.js';

/** What a decision over several nodes produces. */
export interface FleetPlan<T> {
  /** Events per node (only nodes the write loaded); a node without events is left as it is. */
  events: ReadonlyMap<string, readonly NodeEvent[]>;
  /** The generations' reason. */
  reason: string;
  /**
   * Events of other streams decided together, each loaded through `more` first
   * (its version is checked); `guard` keeps a stream the decision read but does
   * not change at that version.
   */
  alongside?: readonly { streamId: string; events: readonly DomainEvent[]; guard?: boolean }[];
  result: T;
}

export interface FleetWriteOutcome<T> {
  result: T;
  /** Nodes whose records the write changed (or, in a dry run, would change), sorted. */
  changed: string[];
  /**
   * The generation each changed node is at after the write: its new one when
   * the write published it, else its current one (a decommissioned node keeps
   * its empty state, a node never published stays at 0 until its first
   * publication, which then carries the change). Empty in a dry run.
   */
  generations: Record<string, number>;
  published: Published[];
  deliveries: Delivery[];
}

/**
 * One decision over every node of the fleet in one append: list the nodes,
 * load every node's stream, decide, re-materialise each changed node that is
 * active and already published, append everything with the versions it was
 * decided on (unchanged nodes and other nodes read are guarded), then ring the
 * doorbells after commit. A dry run decides and materialises the same way (so
 * it fails where the real run would) and appends nothing.
 *
 * The node list is read inside each attempt, while the write holds the fleet
 * lock (`FLEET_LOCK`) exclusively: every node write holds it shared, so none
 * runs meanwhile ("every non-decommissioned node" means every one when the
 * write commits). The node streams stay optimistic (guarded), for the few
 * writers that do not take the fleet lock. On a store without writer locks
 * (KurrentDB) `fleet-topology` is guarded instead: creating, deleting,
 * decommissioning or recommissioning a node appends there (`writeNode`,
 * `TOPOLOGY_STREAM`), so a node created while the decision runs makes the
 * append fail and the retry lists it.
 */
export async function writeNodes<T>(
  deps: FleetDeps,
  plan: (nodes: ReadonlyMap<string, NodeState>, more: LoadMore) => Promise<FleetPlan<T>> | FleetPlan<T>,
  metadata: EventMetadata,
  options: { dryRun?: boolean } = {},
): Promise<FleetWriteOutcome<T>> {
  const { result } = await execute(
    deps.store,
    [],
    async (_streams, load) => {
      const topology = !hasWriterLocks(deps);
      if (topology) await load(TOPOLOGY_STREAM, 'version');
      const ids = [...new Set((await listNodes(deps.db)).map((n) => n.node_id))].sort();
      const primaries = new Set(ids.map(nodeStream));
      const read = new Set<string>();
      const more = observedLoads(load, (streamId) => {
        if (streamId.startsWith('node-') && !primaries.has(streamId)) read.add(streamId);
      });
      // Every node's state in one read (one statement on PostgreSQL) of the events after its last fold, not a round trip per node.
      const folded = await load.folded(ids.map(nodeStream), nodeDecider);
      const before = new Map(ids.map((id, i) => [id, folded[i].state]));
      const decided = await plan(before, more);
      const after = new Map(before);
      for (const [id, events] of decided.events) {
        if (!before.has(id)) throw new Error(`fleet plan changes node ${id}, which the write did not load`);
        if (events.length > 0) after.set(id, events.reduce(nodeDecider.evolve, before.get(id)!));
      }
      const changed = ids.filter((id) => (decided.events.get(id)?.length ?? 0) > 0);
      const loader = new FleetLoader(deps.db, more, after);

      const writes: { streamId: string; events: readonly DomainEvent[]; guard?: boolean }[] = [];
      const published: Published[] = [];
      const generations: Record<string, number> = {};
      for (const id of ids) writes.push({ streamId: nodeStream(id), events: decided.events.get(id) ?? [], guard: true });
      await loader.prefetch(changed);
      for (const id of changed) {
        const node = after.get(id)!;
        const current = await loader.generation(id);
        generations[id] = current;
        if (node.status !== 'Live' || node.lifecycle !== 'active' || current === 0) continue;
        const next = await publication(loader, node, decided.reason);
        published.push(next.published);
        generations[id] = next.published.generation;
        writes.push(next.write);
      }
      for (const other of decided.alongside ?? []) writes.push(other);
      for (const streamId of [...read].sort()) writes.push({ streamId, events: [], guard: true });
      if (topology) writes.push({ streamId: TOPOLOGY_STREAM, events: [], guard: true });
      if (options.dryRun) return { writes: [], result: { result: decided.result, changed, generations: {}, published: [] } };
      return { writes, result: { result: decided.result, changed, generations, published } };
    },
    metadata,
    // A dry run appends nothing: it only keeps node writes from changing what it reads.
    { locks: [{ name: FLEET_LOCK, shared: options.dryRun }], lockWritten: false },
  );
  if (options.dryRun || result.changed.length === 0) return { ...result, deliveries: [] };
  await deps.settle?.();
  const deliveries = await deps.doorbell.ring(result.published.map((p): DoorbellEvent => ({ type: 'desired_state_updated', ...p })));
  return { ...result, deliveries };
}

/** The live nodes among the loaded states (deleted ids drop out). */
export function liveNodes(states: ReadonlyMap<string, NodeState>): LiveNode[] {
  return [...states.values()].filter((s): s is LiveNode => s.status === 'Live');
}
