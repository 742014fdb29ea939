import { live, nodeDecider, type NodeCommand } from '../domain/node/decide.js';
import { nodeStream, type NodeEvent, type PeeringRecord } from '../domain/node/events.js';
import { peeringRecord, provisionCommands, reserveProvisionIds, type ProvisionIds, type ProvisionInput } from '../domain/node/provision.js';
import type { InterfaceSpec, PeeringIn, PeeringPatch, SessionSpec } from '../domain/node/specs.js';
import type { LiveNode } from '../domain/node/state.js';
import { fold } from '../domain/decider.js';
import type { EventMetadata } from '../infra/eventstore/types.js';
import type { AnswerReader, FleetDeps, NodeWriteOutcome } from './fleet-write.js';
import { writeNode, type NodeWriteInput, type NodeWriteRequest } from './node-write.js';
import { load, type LoadMore } from './handle.js';
import { cancelRequestsOfPeerings } from './autopeering-cancel.js';

/** Whether a referenced node exists, read from its stream (which the append then guards). */
async function remoteExists(more: LoadMore, remote: string | null | undefined): Promise<boolean> {
  if (!remote) return true;
  const state = fold(nodeDecider, (await more(nodeStream(remote))).events as NodeEvent[]);
  return state.status === 'Live';
}

export function createPeering<A = undefined>(deps: FleetDeps, nodeId: string, input: PeeringIn, metadata: EventMetadata, read?: AnswerReader<number, A>) {
  const create = async ({ more, reserve }: NodeWriteInput): Promise<NodeWriteRequest<number>> => {
    const [id] = await reserve('peering');
    const remote = await remoteExists(more, input.remote_node_id);
    const command: NodeCommand = { type: 'CreatePeering', node_id: nodeId, peering: peeringRecord(id, input), remoteExists: remote };
    return { commands: [command], reason: `peering ${input.name} created`, result: id };
  };
  return writeNode(deps, nodeId, create, metadata, read);
}

/** A PATCH that changes nothing (every field as stored) appends nothing and publishes nothing. */
export function updatePeering<A = undefined>(
  deps: FleetDeps,
  nodeId: string,
  peeringId: number,
  changes: PeeringPatch,
  metadata: EventMetadata,
  read?: AnswerReader<void, A>,
) {
  const update = async ({ state, more }: NodeWriteInput): Promise<NodeWriteRequest<void>> => {
    const name = changes.name ?? live(state, nodeId).peerings.find((p) => p.id === peeringId)?.name ?? peeringId;
    const remote = await remoteExists(more, changes.remote_node_id);
    const command: NodeCommand = { type: 'UpdatePeering', node_id: nodeId, peering_id: peeringId, changes, remoteExists: remote };
    return { commands: [command], reason: `peering ${name} updated`, result: undefined };
  };
  return writeNode(deps, nodeId, update, metadata, read);
}

/**
 * Deletes a peering with its interfaces and sessions. The portal request it
 * was created for, if any, is cancelled in the same append (document 2: reject
 * reason `removed by operator`, which frees its seat and its (asn, node) slot).
 */
export async function deletePeering(deps: FleetDeps, nodeId: string, peeringId: number, metadata: EventMetadata): Promise<NodeWriteOutcome<void>> {
  return writeNode(
    deps,
    nodeId,
    async ({ state, more }) => ({
      commands: [{ type: 'DeletePeering', node_id: nodeId, peering_id: peeringId }],
      reason: `peering ${live(state, nodeId).peerings.find((p) => p.id === peeringId)?.name ?? peeringId} deleted`,
      also: await cancelRequestsOfPeerings(deps.db, more, nodeId, [peeringId]),
      result: undefined,
    }),
    metadata,
  );
}

/** A peering, its interface and its sessions in one append; any conflict leaves nothing behind. */
export async function provisionPeering(
  deps: FleetDeps,
  nodeId: string,
  input: ProvisionInput,
  metadata: EventMetadata,
): Promise<NodeWriteOutcome<ProvisionIds>> {
  return writeNode(
    deps,
    nodeId,
    async ({ more, reserve }) => {
      const ids = await reserveProvisionIds(reserve, input.sessions.length);
      const commands = provisionCommands(nodeId, ids, input, await remoteExists(more, input.peering.remote_node_id));
      return { commands, reason: `peering ${input.peering.name} provisioned`, result: ids };
    },
    metadata,
  );
}

export interface FullPeeringInput {
  peering: PeeringIn;
  interfaces: { spec: InterfaceSpec; enabled: boolean; sort_order: number }[];
  sessions: { spec: SessionSpec; sort_order: number }[];
}

/** Create-or-replace a peering by name with its whole child sets. */
export async function replacePeeringFull(deps: FleetDeps, nodeId: string, input: FullPeeringInput, metadata: EventMetadata): Promise<NodeWriteOutcome<number>> {
  return writeNode(
    deps,
    nodeId,
    async ({ state, more, reserve }) => {
      const [newPeeringId] = await reserve('peering');
      const interfaceIds = await reserve('interface', input.interfaces.length);
      const sessionIds = await reserve('bgp_session', input.sessions.length);
      const node = live(state, nodeId);
      const existing = node.peerings.find((p) => p.name === input.peering.name);
      const peeringId = existing?.id ?? newPeeringId;
      const exists = await remoteExists(more, input.peering.remote_node_id);
      const record = peeringRecord(peeringId, input.peering);
      const commands: NodeCommand[] = existing
        ? [
            ...node.interfaces
              .filter((i) => i.peering_id === existing.id)
              .map((i): NodeCommand => ({ type: 'DeleteInterface', node_id: nodeId, interface_id: i.id })),
            ...node.sessions
              .filter((s) => s.peering_id === existing.id)
              .map((s): NodeCommand => ({ type: 'DeleteSession', node_id: nodeId, session_id: s.id })),
            { type: 'UpdatePeering', node_id: nodeId, peering_id: existing.id, changes: withoutId(record), remoteExists: exists },
          ]
        : [{ type: 'CreatePeering', node_id: nodeId, peering: record, remoteExists: exists }];
      commands.push(
        ...input.interfaces.map((i, n): NodeCommand => ({
          type: 'CreateInterface',
          node_id: nodeId,
          interface: { id: interfaceIds[n], peering_id: peeringId, ...i },
        })),
        ...input.sessions.map((s, n): NodeCommand => ({ type: 'CreateSession', node_id: nodeId, session: { id: sessionIds[n], peering_id: peeringId, ...s } })),
      );
      return { commands, reason: `peering ${record.name} replaced`, result: peeringId };
    },
    metadata,
  );
}

function withoutId(record: PeeringRecord): PeeringPatch {
  const { id: _id, ...rest } = record;
  return rest;
}

export interface BackfillPlan {
  peerings: { name: string; remote_asn: number; peering_id: number | null; create: boolean; interface_ids: number[]; bgp_session_ids: number[] }[];
  skipped: { kind: 'interface' | 'bgp_session'; id: number; name: string; reason: string }[];
}

/**
 * Folds orphan interfaces and sessions (no peering) into peerings: a session
 * whose spec names an interface goes with that interface; an interface takes its
 * peering's name and its first session's AS. Sessions without an interface get a
 * peering named after themselves. An existing peering of that name is reused.
 */
export function planBackfill(node: LiveNode): BackfillPlan {
  const orphanIfaces = node.interfaces.filter((i) => i.peering_id === null);
  const orphanSessions = node.sessions.filter((s) => s.peering_id === null);
  const plan: BackfillPlan = { peerings: [], skipped: [] };
  const used = new Set<number>();
  const entry = (name: string, remote_asn: number) => {
    let found = plan.peerings.find((p) => p.name === name);
    if (!found) {
      const existing = node.peerings.find((p) => p.name === name);
      found = {
        name,
        remote_asn: existing?.remote_asn ?? remote_asn,
        peering_id: existing?.id ?? null,
        create: !existing,
        interface_ids: [],
        bgp_session_ids: [],
      };
      plan.peerings.push(found);
    }
    return found;
  };
  for (const iface of orphanIfaces) {
    const sessions = orphanSessions.filter((s) => s.spec.interface === iface.spec.name);
    if (sessions.length === 0) {
      plan.skipped.push({ kind: 'interface', id: iface.id, name: iface.spec.name, reason: 'no bgp session names this interface' });
      continue;
    }
    const target = entry(iface.spec.name, sessions[0].spec.remote_asn);
    target.interface_ids.push(iface.id);
    for (const s of sessions) {
      target.bgp_session_ids.push(s.id);
      used.add(s.id);
    }
  }
  for (const s of orphanSessions) {
    if (used.has(s.id)) continue;
    entry(s.spec.name, s.spec.remote_asn).bgp_session_ids.push(s.id);
  }
  return plan;
}

export async function backfillPeerings(
  deps: FleetDeps,
  nodeId: string,
  dryRun: boolean,
  metadata: EventMetadata,
): Promise<NodeWriteOutcome<BackfillPlan> & { dry_run: boolean }> {
  const planned = planBackfill(live(fold(nodeDecider, (await load(deps.store, nodeStream(nodeId))).events as NodeEvent[]), nodeId));
  if (dryRun) return { dry_run: true, result: planned, answer: undefined, published: [], deliveries: [] };
  const outcome = await writeNode(
    deps,
    nodeId,
    async ({ state, reserve }) => {
      const plan = planBackfill(live(state, nodeId));
      const creates = plan.peerings.filter((p) => p.create);
      const reserved = await reserve('peering', creates.length);
      const commands: NodeCommand[] = [];
      creates.forEach((p, n) => {
        p.peering_id = reserved[n];
        commands.push({
          type: 'CreatePeering',
          node_id: nodeId,
          peering: peeringRecord(reserved[n], { name: p.name, remote_asn: p.remote_asn }),
          remoteExists: true,
        });
      });
      for (const p of plan.peerings) {
        for (const id of p.interface_ids) commands.push({ type: 'UpdateInterface', node_id: nodeId, interface_id: id, changes: { peering_id: p.peering_id } });
        for (const id of p.bgp_session_ids) commands.push({ type: 'UpdateSession', node_id: nodeId, session_id: id, changes: { peering_id: p.peering_id } });
      }
      return { commands, reason: 'peering backfill', result: plan };
    },
    metadata,
  );
  return { ...outcome, dry_run: false };
}
