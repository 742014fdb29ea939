import { fold, type DomainEvent } from '../domain/decider.js';
import type { FleetContext, InboundPeering, NodeFacts } from '../domain/desired-state/context.js';
import { desiredStateStream, generationOfVersion } from '../domain/desired-state/events.js';
import { emptyDesiredState, materialise, referencedNodeIds } from '../domain/desired-state/materialise.js';
import { MATERIALIZATION_FAILED, validateDesiredState } from '../domain/desired-state/schema.js';
import { Validation } from '../domain/errors.js';
import { takesRpki } from '../domain/fleet-ops/agent-gate.js';
import { nodeDecider } from '../domain/node/decide.js';
import { nodeStream, type NodeEvent } from '../domain/node/events.js';
import { addressingOf } from '../domain/node/specs.js';
import type { LiveNode, NodeState } from '../domain/node/state.js';
import type { ActiveDnsGroup } from '../domain/dns/state.js';
import type { Queryable } from '../infra/db/pool.js';
import { agentStatuses } from '../infra/telemetry/liveness.js';
import type { EventMetadata, EventStore } from '../infra/eventstore/types.js';
import { nodesPeeringInternallyWith, nodesPeeringInternallyWithAny, nodesReferring } from '../projections/fleet/queries.js';
import type { Delivery, Doorbell, DoorbellEvent } from '../domain/doorbell.js';
import { loadDnsGroup } from './dns-load.js';
import { execute, observedLoads, type Decision, type LoadedStream, type LoadMore } from './handle.js';

export interface FleetDeps {
  store: EventStore;
  db: Queryable;
  doorbell: Doorbell;
  /**
   * Waits until the read models reflect the write. Needed only where inline
   * projections do not run in the append's transaction (KurrentDB), so that
   * the caller can answer from the read model.
   */
  settle?: () => Promise<void>;
}

/**
 * What a write to one node decides: the node's events, why, and which desired
 * states it changes.
 *
 * - `publish`: `always` re-materialises the node (child writes, recommission),
 *   `if-published` only once it has a first generation (node PATCH), `empty`
 *   publishes the empty desired state (decommission), `none` publishes nothing.
 * - `topology`: the write changes facts other nodes materialise from (router id,
 *   loopbacks, lifecycle, internal peerings, the topology template); nodes that
 *   refer to this one, or that it refers to, are re-materialised too.
 */
export interface NodePlan<T> {
  events: NodeEvent[];
  reason: string;
  publish: 'always' | 'if-published' | 'empty' | 'none';
  topology?: boolean;
  /** Publish this document for the node instead of materialising it (`POST /provision`, rollback). */
  document?: Record<string, unknown>;
  /** Set on a rollback: the generation whose snapshot is re-published. */
  rollbackOf?: number;
  /**
   * Other nodes to re-materialise because the write changes one fact they read
   * (the WireGuard key their internal peerings point at), without the wider
   * `topology` fan-out. Serialised with topology writes like `topology`; the plan
   * loads `fleet-topology` (`TOPOLOGY_STREAM`) before it looks the nodes up.
   */
  alsoPublish?: readonly string[];
  /**
   * Events of other aggregates decided together with the node's (`POST /provision`
   * issuing the node's agent token). The plan loads each stream through `more`
   * first, so the append checks its expected version.
   */
  alongside?: readonly { streamId: string; events: readonly DomainEvent[] }[];
  result: T;
}

export interface Published {
  node_id: string;
  generation: number;
  reason: string;
}

export interface NodeWriteOutcome<T, A = undefined> {
  result: T;
  /** What the write's `AnswerReader` read: this write's state, not a later one's. */
  answer: A;
  /** Every generation the write published, the written node's first. */
  published: Published[];
  deliveries: Delivery[];
}

/**
 * On a store without writer locks (KurrentDB), topology writes of different
 * nodes serialise on this stream: a write that changes facts of node X and a
 * concurrent write that starts referring to X would otherwise each miss the
 * other (neither stream is written by both). With writer locks (PostgreSQL) the
 * stream is not written: the second write reads X's stream, so it holds X's
 * lock when it appends, and the first one looks its referrers up while holding
 * that lock (see `execute`).
 */
export const TOPOLOGY_STREAM = 'fleet-topology';

/**
 * The writer lock of the whole fleet: every write through `appendPublishing`
 * holds it shared (node writes do not wait for each other on it), a fleet-wide
 * write (`writeNodes`) exclusive, so no node is created or changed while it lists
 * and decides over every node.
 */
export const FLEET_LOCK = '$fleet';

/** Whether writes serialise on writer locks (PostgreSQL), so `TOPOLOGY_STREAM` is not needed. */
export const hasWriterLocks = (deps: FleetDeps): boolean => deps.store.withWriteLocks !== undefined;

/** Reads what a write answers with, from the read models as the write left them. */
export type AnswerReader<T, A> = (db: Queryable, result: T) => Promise<A>;

/**
 * One write to one node, and the desired states it changes, in one append:
 * load the node, decide, re-materialise every affected node from the streams it
 * reads (guarded, so no published state mixes facts from before and after a
 * concurrent write), append, then ring the doorbell after commit.
 */
export async function writeNode<T, A = undefined>(
  deps: FleetDeps,
  nodeId: string,
  plan: (node: NodeState, more: LoadMore) => Promise<NodePlan<T>> | NodePlan<T>,
  metadata: EventMetadata,
  read?: AnswerReader<T, A>,
): Promise<NodeWriteOutcome<T, A>> {
  const primary = nodeStream(nodeId);
  return appendPublishing(
    deps,
    [primary],
    async (streams, more) => {
      const before = fold(nodeDecider, streams[primary].events as NodeEvent[]);
      const decided = await plan(before, more);
      const after = decided.events.reduce(nodeDecider.evolve, before);
      const loader = new FleetLoader(deps.db, more, new Map([[nodeId, after]]));

      const targets: { node: LiveNode; empty: boolean }[] = [];
      if (after.status === 'Live') {
        if (decided.publish === 'empty') targets.push({ node: after, empty: true });
        else if (decided.document) targets.push({ node: after, empty: false });
        else if (
          after.lifecycle === 'active' &&
          (decided.publish === 'always' || (decided.publish === 'if-published' && (await loader.generation(nodeId)) > 0))
        ) {
          targets.push({ node: after, empty: false });
        }
      }
      // Another node is re-materialised once, and only while active and already published.
      const republish = async (other: string) => {
        if (other === nodeId || targets.some((t) => t.node.node_id === other)) return;
        const node = await loader.node(other);
        if (node?.lifecycle === 'active' && (await loader.generation(other)) > 0) targets.push({ node, empty: false });
      };
      if (decided.topology) {
        const others = new Set([...(await nodesReferring(deps.db, nodeId)), ...referencesOf(before), ...referencesOf(after)]);
        for (const other of [...others].sort()) await republish(other);
      }
      for (const other of decided.alsoPublish ?? []) await republish(other);

      const published: Published[] = [];
      const writes: Write[] = [{ streamId: primary, events: decided.events }];
      for (const target of targets) {
        const own = target.node.node_id === nodeId;
        const given = own && decided.document ? decided.document : target.empty ? emptyDesiredState(target.node) : undefined;
        const next = await publication(loader, target.node, decided.reason, given, own ? decided.rollbackOf : undefined);
        published.push(next.published);
        writes.push(next.write);
      }
      for (const other of decided.alongside ?? []) writes.push(other);
      if (!hasWriterLocks(deps) && (decided.topology || decided.alsoPublish?.length) && decided.events.length > 0) {
        await more(TOPOLOGY_STREAM, 'version');
        writes.push({ streamId: TOPOLOGY_STREAM, events: [{ type: 'FleetTopologyChanged', data: { node_id: nodeId, reason: decided.reason } }] });
      }
      return { writes, published, result: decided.result };
    },
    metadata,
    read,
  );
}

type Write = Decision['writes'][number];

/** What a decision that re-materialises nodes appends, and which generations it publishes. */
export interface PublishingDecision<T> {
  writes: Write[];
  published: Published[];
  result: T;
}

/**
 * The append step of every write that publishes desired states (`writeNode`,
 * `writeDnsGroup`): decide over `streams`, append the writes in one go with every
 * node stream the decision read through `more` but does not write guarded (so no
 * published state mixes facts from before and after a concurrent write to a node
 * it read), then, after commit, wait for the read models and ring the doorbell of
 * every published generation.
 */
export async function appendPublishing<T, A = undefined>(
  deps: FleetDeps,
  streams: readonly string[],
  decide: (streams: Record<string, LoadedStream>, more: LoadMore) => Promise<PublishingDecision<T>>,
  metadata: EventMetadata,
  read?: AnswerReader<T, A>,
): Promise<NodeWriteOutcome<T, A>> {
  const { result, answered } = await execute(
    deps.store,
    streams,
    async (loaded, load) => {
      const read = new Set<string>();
      const more = observedLoads(load, (streamId) => {
        if (streamId.startsWith('node-')) read.add(streamId);
      });
      const decided = await decide(loaded, more);
      const written = new Set(decided.writes.map((w) => w.streamId));
      const guards = [...read].sort().filter((streamId) => !written.has(streamId));
      const writes = [...decided.writes, ...guards.map((streamId): Write => ({ streamId, events: [], guard: true }))];
      return { writes, result: { result: decided.result, published: decided.published } };
    },
    metadata,
    {
      locks: [{ name: FLEET_LOCK, shared: true }, ...streams.map((name) => ({ name }))],
      // The pg client of the append's transaction, as the read-model queries take it.
      answer: read && ((tx, r) => read(tx as Queryable, r.result)),
    },
  );
  await deps.settle?.();
  // Without writer locks (KurrentDB) the answer is read after the projection caught up: another write may show through.
  const answer = (answered ? answered.value : read ? await read(deps.db, result.result) : undefined) as A;
  const deliveries = await deps.doorbell.ring(result.published.map((p): DoorbellEvent => ({ type: 'desired_state_updated', ...p })));
  return { result: result.result, answer, published: result.published, deliveries };
}

/** Remote nodes a node's materialisation reads (internal peerings, topology routers). */
function referencesOf(state: NodeState): string[] {
  return state.status === 'Live' ? referencedNodeIds(state) : [];
}

/**
 * The `DesiredStatePublished` write that gives `node` its next generation: the
 * `given` document (provision, rollback, decommission), else the node
 * materialised; validated either way (422 `MATERIALIZATION_FAILED`).
 */
export async function publication(
  loader: FleetLoader,
  node: LiveNode,
  reason: string,
  given?: object,
  rollbackOf?: number,
): Promise<{ published: Published; write: { streamId: string; events: DomainEvent[] } }> {
  const state = given ?? materialise(node, await loader.context(node));
  const check = validateDesiredState(state);
  if (!check.ok) throw new Validation(MATERIALIZATION_FAILED, check.errors);
  // Validation fills absent defaults in place, `bird.rpki` included; an agent that predates the field refuses any
  // document with it, a given one too (a rollback to a generation from before it, a decommission, a provision).
  if (!takesRpki(await loader.agentVersion(node.node_id))) delete (state as { bird?: { rpki?: unknown } }).bird?.rpki;
  const generation = (await loader.generation(node.node_id)) + 1;
  const data = {
    node_id: node.node_id,
    generation,
    reason,
    state: state as Record<string, unknown>,
    ...(rollbackOf !== undefined ? { rollback_of: rollbackOf } : {}),
  };
  return {
    published: { node_id: node.node_id, generation, reason },
    write: { streamId: desiredStateStream(node.node_id), events: [{ type: 'DesiredStatePublished', data }] },
  };
}

/**
 * Loads what materialisation needs from other nodes' streams, once each, within
 * one decision. `decided` holds the states the decision itself produced (the
 * nodes being written): those count over their streams and the read model.
 */
export class FleetLoader {
  private readonly nodes = new Map<string, LiveNode | undefined>();
  private readonly generations = new Map<string, number>();
  private readonly decidedIds: ReadonlySet<string>;
  /** Internal peerings of the decided nodes, by the node they point at (each node's in order). */
  private readonly decidedInbound = new Map<string, InboundPeering[]>();
  /**
   * DNS groups by id, each loaded once. A write to a group sets its decided state
   * here first, so its members materialise from the group as it will be.
   */
  readonly dnsGroups = new Map<number, ActiveDnsGroup | null>();
  /** Read-model lookups made for many nodes at once (`prefetch`), by node id. */
  private agentVersions?: Map<string, string | null>;
  private inboundCandidates?: Map<string, string[]>;

  constructor(
    private readonly db: Queryable,
    private readonly more: LoadMore,
    decided: ReadonlyMap<string, NodeState>,
  ) {
    for (const [id, state] of decided) {
      this.nodes.set(id, state.status === 'Live' ? state : undefined);
      for (const p of state.status === 'Live' ? state.peerings : []) {
        if (!p.is_internal || p.remote_node_id == null || p.remote_node_id === id) continue;
        const list = this.decidedInbound.get(p.remote_node_id) ?? [];
        list.push({ node_id: id, peering_id: p.id, name: p.name, enabled: p.enabled });
        this.decidedInbound.set(p.remote_node_id, list);
      }
    }
    this.decidedIds = new Set(decided.keys());
  }

  async node(nodeId: string): Promise<LiveNode | undefined> {
    if (!this.nodes.has(nodeId)) {
      const stream = await this.more(nodeStream(nodeId));
      const state = fold(nodeDecider, stream.events as NodeEvent[]);
      this.nodes.set(nodeId, state.status === 'Live' ? state : undefined);
    }
    return this.nodes.get(nodeId);
  }

  /** The node's current generation (0 before its first). */
  async generation(nodeId: string): Promise<number> {
    if (!this.generations.has(nodeId)) {
      const stream = await this.more(desiredStateStream(nodeId), 'version');
      this.generations.set(nodeId, generationOfVersion(stream.version));
    }
    return this.generations.get(nodeId)!;
  }

  /**
   * Looks up, in one query each, what materialising these nodes reads from the
   * read models (agent versions, candidates for inbound internal peerings) and
   * their desired-state stream versions (one read of the store), so a write
   * re-materialising hundreds of nodes (a DNS group, a fleet-wide write) does
   * not make round trips per node.
   */
  async prefetch(nodeIds: readonly string[]): Promise<void> {
    if (nodeIds.length === 0) return;
    const unknown = nodeIds.filter((id) => !this.generations.has(id));
    const streams = await this.more.many(unknown.map(desiredStateStream), 'version');
    unknown.forEach((id, i) => this.generations.set(id, generationOfVersion(streams[i].version)));
    this.agentVersions ??= new Map();
    this.inboundCandidates ??= new Map();
    for (const id of nodeIds) {
      this.agentVersions.set(id, null);
      this.inboundCandidates.set(id, []);
    }
    for (const s of await agentStatuses(this.db, nodeIds)) this.agentVersions.set(s.node_id, s.agent_version ?? null);
    for (const [remote, peers] of await nodesPeeringInternallyWithAny(this.db, nodeIds)) this.inboundCandidates.set(remote, peers);
  }

  /** The version the node's agent last reported (null: never), prefetched or read once. */
  async agentVersion(nodeId: string): Promise<string | null> {
    if (!this.agentVersions?.has(nodeId)) {
      this.agentVersions ??= new Map();
      this.agentVersions.set(nodeId, (await agentStatuses(this.db, [nodeId]))[0]?.agent_version ?? null);
    }
    return this.agentVersions.get(nodeId)!;
  }

  async context(node: LiveNode): Promise<FleetContext> {
    const inbound = await this.inbound(node.node_id);
    const ids = new Set([...referencedNodeIds(node), ...inbound.map((p) => p.node_id)]);
    ids.delete(node.node_id);
    const nodes = new Map<string, NodeFacts>();
    for (const id of [...ids].sort()) {
      const other = await this.node(id);
      if (other) nodes.set(id, factsOf(other));
    }
    const agent_version = await this.agentVersion(node.node_id);
    return { nodes, inbound, wireguard_public_key: node.wireguard?.public_key ?? null, agent_version, dns_group: await this.dnsGroup(node.dns_group_id) };
  }

  private async dnsGroup(groupId: number | null | undefined): Promise<ActiveDnsGroup | null> {
    if (groupId == null) return null;
    if (!this.dnsGroups.has(groupId)) this.dnsGroups.set(groupId, await loadDnsGroup(this.more, groupId));
    return this.dnsGroups.get(groupId)!;
  }

  /**
   * Internal peerings of other nodes that point at `nodeId`, by node id. The read
   * model finds the candidates; each one is confirmed from its node's stream
   * (which the append then guards), and the nodes being written count as
   * decided (indexed once, so a write over the whole fleet does not scan every
   * node for every node).
   */
  private async inbound(nodeId: string): Promise<InboundPeering[]> {
    const candidates = new Set(this.inboundCandidates?.get(nodeId) ?? (await nodesPeeringInternallyWith(this.db, nodeId)));
    const out = [...(this.decidedInbound.get(nodeId) ?? [])];
    for (const id of [...candidates].sort()) {
      // A decided node's peerings are in `decidedInbound` already.
      if (id !== nodeId && this.decidedIds.has(id)) continue;
      const other = await this.node(id);
      for (const p of other?.peerings ?? []) {
        if (p.is_internal && p.remote_node_id === nodeId) out.push({ node_id: id, peering_id: p.id, name: p.name, enabled: p.enabled });
      }
    }
    // Stable: each node's peerings stay in their order.
    return out.sort((a, b) => (a.node_id < b.node_id ? -1 : a.node_id > b.node_id ? 1 : 0));
  }
}

export function factsOf(node: LiveNode): NodeFacts {
  return {
    node_id: node.node_id,
    ...addressingOf(node.fields),
    lifecycle: node.lifecycle,
    wireguard_public_key: node.wireguard?.public_key ?? null,
  };
}
