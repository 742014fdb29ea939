import { fold, type DomainEvent } from '../domain/decider.js';
import { emptyDesiredState } from '../domain/desired-state/materialise.js';
import { publicationsFor, type NodePublications } from '../domain/desired-state/publications.js';
import { decideAll, nodeDecider, type NodeCommand } from '../domain/node/decide.js';
import { nodeStream, type NodeEvent } from '../domain/node/events.js';
import type { LiveNode, NodeState } from '../domain/node/state.js';
import type { Delivery, DoorbellEvent } from '../domain/doorbell.js';
import type { Queryable } from '../infra/db/pool.js';
import type { EventMetadata, WriteLock } from '../infra/eventstore/types.js';
import { listNodes } from '../projections/fleet/queries.js';
import {
  FLEET_LOCK,
  FleetLoader,
  hasWriterLocks,
  publishAffected,
  publishAll,
  TOPOLOGY_STREAM,
  type AnswerReader,
  type FleetDeps,
  type NodeWriteOutcome,
  type PublicationTarget,
  type Published,
} from './fleet-write.js';
import { execute, observedLoads, type Decision, type LoadMore } from './handle.js';
import { nextIds, type IdKind } from './ids.js';

/**
 * The node write pipeline: every write to one node stream (node, peering,
 * interface, session, DNS membership, lifecycle, generations, portal requests)
 * takes these steps in one `execute` on `node-<id>`:
 *
 *   1. `prepare` turns the node as the write locked it into commands (ids are
 *      reserved here, inside the write) and the other streams' events;
 *   2. `decideAll` decides the commands on the node;
 *   3. `publicationsFor` (domain/desired-state/publications.ts) says what the
 *      events publish and whether they touch the topology;
 *   4. the affected nodes are materialised (`publishAffected`, fleet-write.ts);
 *   5. one append: node events, publications, other streams, guards;
 *   6. after commit, the doorbell rings for every published generation.
 *
 * `writeNodes` (below) is the same pipeline over every node of the fleet, `writeDnsGroup`
 * (dns-write.ts) over a DNS group's members.
 */
export async function writeNode<T, A = undefined>(
  deps: FleetDeps,
  nodeId: string,
  prepare: (write: NodeWriteInput) => Promise<NodeWriteRequest<T>> | NodeWriteRequest<T>,
  metadata: EventMetadata,
  answer?: AnswerReader<T, A>,
): Promise<NodeWriteOutcome<T, A>> {
  const primary = nodeStream(nodeId);
  const executed = await execute(
    deps.store,
    [primary],
    async (streams, load) => {
      const { more, guards } = guardedLoads(load);
      const before = fold(nodeDecider, streams[primary].events as NodeEvent[]);
      const request = await prepare({ state: before, more, reserve: (kind, count) => nextIds(deps.db, kind, count) });
      const { events, after, effects } = decideChanges(request, before);
      // A given document replaces the node's whole state: with node events it is a topology write (`POST /provision`).
      if (request.document) effects.topology ||= events.length > 0;

      const reason = typeof request.reason === 'function' ? request.reason(events) : request.reason;
      const {
        published,
        writes: publications,
        inbound,
      } = await publishAffected(deps, more, {
        nodeId,
        before,
        after,
        effects,
        reason,
        document: request.document,
        rollbackOf: request.rollbackOf,
        refresh: request.refresh,
      });
      const writes: Write[] = [{ streamId: primary, events }, ...publications, ...(request.also ?? [])];
      if (!hasWriterLocks(deps) && (effects.topology || inbound.length > 0) && events.length > 0) {
        await more(TOPOLOGY_STREAM, 'version');
        writes.push({ streamId: TOPOLOGY_STREAM, events: [{ type: 'FleetTopologyChanged', data: { node_id: nodeId, reason } }] });
      }
      return { writes: guards(writes), result: { result: request.result, published } };
    },
    metadata,
    {
      locks: publishingLocks([primary]),
      // The pg client of the append's transaction, as the read-model queries take it.
      answer: answer && ((tx, r) => answer(tx as Queryable, r.result)),
    },
  );
  return afterCommit(deps, executed, answer);
}

/** What `prepare` sees: the node as the write locked it, more streams to read (guarded), and ids to reserve. */
export interface NodeWriteInput {
  state: NodeState;
  more: LoadMore;
  /** New ids from the sequences, reserved inside the write (an id is never reused, even when the write fails). */
  reserve: (kind: IdKind, count?: number) => Promise<number[]>;
}

/** What a write to one node asks for, decided from the state it was given. */
export interface NodeWriteRequest<T> {
  /** Commands on the node, decided in order by `decideAll`. */
  commands?: readonly NodeCommand[];
  /** Node events decided by another decider of the node stream (autopeering policy, DNS membership). */
  events?: readonly NodeEvent[];
  /** Why, for the generations it publishes; a function reads it from the decided events. */
  reason: string | ((events: readonly NodeEvent[]) => string);
  /** Events of other streams in the same append (portal request, DNS group members, agent token), each loaded through `more`. */
  also?: readonly StreamEvents[];
  /** Publish this document for the node instead of materialising it (`POST /provision`, rollback, notify). */
  document?: Record<string, unknown>;
  /** Set on a rollback: the generation whose snapshot is re-published. */
  rollbackOf?: number;
  /** Re-materialise the node, once published, though no event changed it (an agent crossing a version gate). */
  refresh?: boolean;
  result: T;
}

/**
 * Steps 2 and 3 for one node: its commands decided in order (`decideAll`), then
 * the events another decider gave it; the state after both, and what they publish.
 */
function decideChanges(changes: NodeChanges, before: NodeState): { events: NodeEvent[]; after: NodeState; effects: NodePublications } {
  const decided = decideAll(changes.commands ?? [], before);
  const events = [...decided.events, ...(changes.events ?? [])];
  const after = (changes.events ?? []).reduce(nodeDecider.evolve, decided.state);
  return { events, after, effects: publicationsFor({ events, before, after }) };
}

/** Events for one stream, as a write appends them. */
export interface StreamEvents {
  streamId: string;
  events: readonly DomainEvent[];
}

type Write = Decision['writes'][number];

/**
 * `more` recording every node stream a decision reads, and `guards(writes)`
 * adding a guard for each one it does not write: no published state mixes facts
 * from before and after a concurrent write to a node it read.
 */
export function guardedLoads(load: LoadMore): { more: LoadMore; guards: (writes: Write[]) => Write[] } {
  const read = new Set<string>();
  const more = observedLoads(load, (streamId) => {
    if (streamId.startsWith('node-')) read.add(streamId);
  });
  const guards = (writes: Write[]) => {
    const written = new Set(writes.map((w) => w.streamId));
    return [...writes, ...[...read].sort().flatMap((streamId): Write[] => (written.has(streamId) ? [] : [{ streamId, events: [], guard: true }]))];
  };
  return { more, guards };
}

/**
 * The writer locks of a write that publishes desired states: `$fleet` shared (a
 * fleet-wide write holds it exclusive, so none runs meanwhile) and its own streams.
 */
export function publishingLocks(streams: readonly string[]): WriteLock[] {
  return [{ name: FLEET_LOCK, shared: true }, ...streams.map((name) => ({ name }))];
}

/**
 * After commit: wait for the read models (KurrentDB), read the answer there when
 * the transaction could not (without writer locks another write may show
 * through), and ring the doorbell of every published generation.
 */
export async function afterCommit<T, A>(
  deps: FleetDeps,
  executed: { result: { result: T; published: Published[] }; answered?: { value: unknown } },
  answer?: AnswerReader<T, A>,
): Promise<NodeWriteOutcome<T, A>> {
  const { result, published } = executed.result;
  await deps.settle?.();
  const answered = (executed.answered ? executed.answered.value : answer ? await answer(deps.db, result) : undefined) as A;
  const deliveries = await deps.doorbell.ring(published.map((p): DoorbellEvent => ({ type: 'desired_state_updated', ...p })));
  return { result, answer: answered, published, deliveries };
}

/** What a write over the whole fleet asks for, decided from every node's state. */
export interface FleetWriteRequest<T> {
  /** Per node (only nodes the write loaded): its commands, decided in order by `decideAll`, then node events a fleet plan decided. */
  nodes: ReadonlyMap<string, NodeChanges>;
  /** The generations' reason. */
  reason: string;
  /**
   * Events of other streams decided together (the mitigation log), each loaded
   * through `more` first: appended at the version read, or guarded at it when
   * there are none.
   */
  also?: readonly StreamEvents[];
  result: T;
}

/** One node's part of a fleet-wide write. */
export interface NodeChanges {
  commands?: readonly NodeCommand[];
  events?: readonly NodeEvent[];
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
 * The node write pipeline over every node of the fleet, in one append: list the
 * nodes and fold every node's stream (one read), `prepare` each node's changes,
 * then per changed node `decideAll` and `publicationsFor`; materialise the
 * changed nodes that are active and already published (`publishAll`, the reads
 * prefetched for all of them at once); append everything with the versions it
 * was decided on (unchanged nodes and other node streams read are guarded);
 * `afterCommit` rings the doorbells. A dry run decides and materialises the same
 * way (so it fails where the real run would) and appends nothing.
 *
 * A fleet-wide write re-materialises only the nodes it changes and never gives a
 * node its first generation: its plans change every node they touch, and a
 * fan-out per node (`affectedNodes`) would cost a lookup per node at fleet size.
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
  prepare: (nodes: ReadonlyMap<string, NodeState>, more: LoadMore) => Promise<FleetWriteRequest<T>> | FleetWriteRequest<T>,
  metadata: EventMetadata,
  options: { dryRun?: boolean } = {},
): Promise<FleetWriteOutcome<T>> {
  const executed = await execute(
    deps.store,
    [],
    async (_streams, load) => {
      const { more, guards } = guardedLoads(load);
      const topology = !hasWriterLocks(deps);
      if (topology) await load(TOPOLOGY_STREAM, 'version');
      const ids = [...new Set((await listNodes(deps.db)).map((n) => n.node_id))].sort();
      // Every node's state in one read (one statement on PostgreSQL) of the events after its last fold, not a round trip per node.
      const folded = await more.folded(ids.map(nodeStream), nodeDecider);
      const before = new Map(ids.map((id, i) => [id, folded[i].state]));
      const request = await prepare(before, more);

      const after = new Map(before);
      const events = new Map<string, NodeEvent[]>();
      const effects = new Map<string, NodePublications>();
      for (const [id, change] of request.nodes) {
        const state = before.get(id);
        if (!state) throw new Error(`fleet write changes node ${id}, which it did not load`);
        const decided = decideChanges(change, state);
        if (decided.events.length === 0) continue;
        events.set(id, decided.events);
        after.set(id, decided.after);
        effects.set(id, decided.effects);
      }
      const changed = ids.filter((id) => events.has(id));

      const loader = new FleetLoader(deps.db, more, after);
      await loader.prefetch(changed);
      const generations: Record<string, number> = {};
      const targets: PublicationTarget[] = [];
      for (const id of changed) {
        const node = after.get(id)!;
        const publish = effects.get(id)!.publish;
        generations[id] = await loader.generation(id);
        if (node.status !== 'Live' || publish === 'none' || generations[id] === 0) continue;
        if (publish === 'empty') targets.push({ node, given: emptyDesiredState(node) });
        else if (node.lifecycle === 'active') targets.push({ node });
      }
      const { published, writes: publications } = await publishAll(loader, targets, request.reason);
      if (options.dryRun) return { writes: [], result: { result: { result: request.result, changed, generations: {} }, published: [] } };
      for (const p of published) generations[p.node_id] = p.generation;

      const writes: Write[] = ids.map((id) => ({ streamId: nodeStream(id), events: events.get(id) ?? [], guard: true }));
      writes.push(...publications, ...(request.also ?? []).map((w) => ({ ...w, guard: true })));
      if (topology) writes.push({ streamId: TOPOLOGY_STREAM, events: [], guard: true });
      return { writes: guards(writes), result: { result: { result: request.result, changed, generations }, published } };
    },
    metadata,
    // A dry run appends nothing: it only keeps node writes from changing what it reads.
    { locks: [{ name: FLEET_LOCK, shared: options.dryRun }], lockWritten: false },
  );
  const { result, changed, generations } = executed.result.result;
  if (options.dryRun) return { result, changed, generations, published: [], deliveries: [] };
  const { published, deliveries } = await afterCommit(deps, executed);
  return { result, changed, generations, published, deliveries };
}

/** The live nodes among the loaded states (deleted ids drop out). */
export function liveNodes(states: ReadonlyMap<string, NodeState>): LiveNode[] {
  return [...states.values()].filter((s): s is LiveNode => s.status === 'Live');
}
