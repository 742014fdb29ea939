import { fold, type DomainEvent } from '../domain/decider.js';
import type { FleetContext, InboundPeering, NodeFacts } from '../domain/desired-state/context.js';
import { desiredStateStream, generationOfVersion, type DesiredStatePublished } from '../domain/desired-state/events.js';
import { emptyDesiredState, referencedNodeIds } from '../domain/desired-state/materialise.js';
import type { NodePublications } from '../domain/desired-state/publications.js';
import { nodeDecider } from '../domain/node/decide.js';
import { nodeStream, type NodeEvent } from '../domain/node/events.js';
import { addressingOf } from '../domain/node/specs.js';
import type { LiveNode, NodeState } from '../domain/node/state.js';
import type { ActiveDnsGroup } from '../domain/dns/state.js';
import { withJsonText } from '../infra/db/json-batch.js';
import type { Queryable } from '../infra/db/pool.js';
import { agentStatuses } from '../infra/telemetry/liveness.js';
import type { EventStore } from '../infra/eventstore/types.js';
import { nodesPeeringInternallyWith, nodesPeeringInternallyWithAny, nodesReferring } from '../projections/fleet/queries.js';
import type { Delivery, Doorbell } from '../domain/doorbell.js';
import { loadDnsGroup } from './dns-load.js';
import type { LoadMore } from './handle.js';
import { checkedDocument, materialised } from './materialised.js';

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
 * The writer lock of the whole fleet: every publishing write (`publishingLocks`)
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
  const generation = (await loader.generation(node.node_id)) + 1;
  const head = { node_id: node.node_id, generation, reason };
  const tail = rollbackOf !== undefined ? { rollback_of: rollbackOf } : {};
  let data: DesiredStatePublished['data'];
  if (given) {
    data = { ...head, state: checkedDocument(given, await loader.agentVersion(node.node_id)), ...tail };
  } else {
    const { state, text } = materialised(node, await loader.context(node));
    // The event's text from the document's (the same bytes `JSON.stringify(data)` makes): documents a write to a
    // DNS group publishes share their text but `dns` with the members' last ones, kept by `materialised`.
    const json = JSON.stringify({ ...head, state: null, ...tail }).replace(',"state":null', () => `,"state":${text}`);
    data = withJsonText({ ...head, state, ...tail }, json);
  }
  return {
    published: head,
    write: { streamId: desiredStateStream(node.node_id), events: [{ type: 'DesiredStatePublished', data }] },
  };
}

/** A node a write re-materialises: with a `given` document instead (provision, rollback, decommission). */
export interface PublicationTarget {
  node: LiveNode;
  given?: object;
  rollbackOf?: number;
}

/** Step 4 of every publishing write: the next generation of each target, in order (`publication`). */
export async function publishAll(
  loader: FleetLoader,
  targets: readonly PublicationTarget[],
  reason: string,
): Promise<{ published: Published[]; writes: { streamId: string; events: DomainEvent[] }[] }> {
  const published: Published[] = [];
  const writes: { streamId: string; events: DomainEvent[] }[] = [];
  for (const { node, given, rollbackOf } of targets) {
    const next = await publication(loader, node, reason, given, rollbackOf);
    published.push(next.published);
    writes.push(next.write);
  }
  return { published, writes };
}

/** One node's write as the materialise step needs it: the node before and after, what its events publish, and why. */
export interface NodeWritten {
  nodeId: string;
  before: NodeState;
  after: NodeState;
  effects: NodePublications;
  reason: string;
  /** Publish this document for the node instead of materialising it (provision, rollback, notify). */
  document?: object;
  /** Set on a rollback: the generation whose snapshot is re-published. */
  rollbackOf?: number;
  /** Re-materialise the node, once published, though no event changed it. */
  refresh?: boolean;
}

/**
 * Step 4 of a write to one node: the nodes it affects (itself, by what its
 * events publish; the nodes that refer to it or that it refers to, on a
 * topology change; its inbound internal peers, for a new WireGuard key)
 * materialised from the streams the decision reads, each as its next generation.
 */
export async function publishAffected(
  deps: FleetDeps,
  more: LoadMore,
  write: NodeWritten,
): Promise<{ published: Published[]; writes: { streamId: string; events: DomainEvent[] }[]; inbound: string[] }> {
  const loader = new FleetLoader(deps.db, more, new Map([[write.nodeId, write.after]]));
  const { targets, inbound } = await affectedNodes(deps, loader, more, write);
  const own = (t: PublicationTarget) => (t.node.node_id === write.nodeId ? { ...t, rollbackOf: write.rollbackOf } : t);
  return { ...(await publishAll(loader, targets.map(own), write.reason)), inbound };
}

/**
 * The nodes a write re-materialises, the written node first, each once; and the
 * nodes it found through inbound internal peerings (`inboundPeers`).
 */
async function affectedNodes(
  deps: FleetDeps,
  loader: FleetLoader,
  more: LoadMore,
  write: NodeWritten,
): Promise<{ targets: PublicationTarget[]; inbound: string[] }> {
  const { nodeId, before, after, effects } = write;
  const targets: PublicationTarget[] = [];
  if (after.status === 'Live') {
    const publish = write.refresh && effects.publish === 'none' ? 'if-published' : effects.publish;
    if (publish === 'empty') targets.push({ node: after, given: emptyDesiredState(after) });
    else if (write.document) targets.push({ node: after, given: write.document });
    else if (after.lifecycle === 'active' && (publish === 'always' || (publish === 'if-published' && (await loader.generation(nodeId)) > 0))) {
      targets.push({ node: after });
    }
  }
  // Another node is re-materialised once, and only while active and already published.
  const republish = async (other: string) => {
    if (other === nodeId || targets.some((t) => t.node.node_id === other)) return;
    const node = await loader.node(other);
    if (node?.lifecycle === 'active' && (await loader.generation(other)) > 0) targets.push({ node });
  };
  if (effects.topology) {
    const others = new Set([...(await nodesReferring(deps.db, nodeId)), ...referencesOf(before), ...referencesOf(after)]);
    for (const other of [...others].sort()) await republish(other);
  }
  let inbound: string[] = [];
  if (effects.inboundPeers) {
    // Race: a concurrent write creating an internal peering towards this node reads this node's stream, so it holds
    // this node's writer lock when it appends, and this lookup runs under that lock. Without writer locks (KurrentDB)
    // that write appends to `fleet-topology`, whose version is read before the peerings are: either this lookup sees
    // that peering or the append fails and decides again.
    if (!hasWriterLocks(deps)) await more(TOPOLOGY_STREAM, 'version');
    inbound = await nodesPeeringInternallyWith(deps.db, nodeId, { enabledOnly: true });
    for (const other of inbound) await republish(other);
  }
  return { targets, inbound };
}

/** Remote nodes a node's materialisation reads (internal peerings, topology routers). */
function referencesOf(state: NodeState): string[] {
  return state.status === 'Live' ? referencedNodeIds(state) : [];
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
