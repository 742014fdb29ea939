import { mergeDetails, type NodeMigration, type OperationDetails } from '../../domain/fleet-ops/details.js';
import { planInternalPorts } from '../../domain/fleet-ops/internal-ports.js';
import { planKeys } from '../../domain/fleet-ops/keys.js';
import { planPeerNames } from '../../domain/fleet-ops/peer-names.js';
import type { LiveNode } from '../../domain/node/state.js';
import type { EventMetadata } from '../../infra/eventstore/types.js';
import type { FleetDeps } from '../fleet-write.js';
import { liveNodes, writeNodes, type NodeChanges } from '../node-write.js';

/** The response of a fleet operation (document 2, Fleet operations). */
export interface FleetOperationResult {
  dry_run: boolean;
  changed_nodes: string[];
  generations: Record<string, number>;
  details: OperationDetails;
}

/** A fleet operation: a name for the generations' reason, and its plan over every live node at once. */
export interface FleetOperation {
  reason: string;
  plan(nodes: readonly LiveNode[]): ReadonlyMap<string, NodeMigration>;
}

export const normalizePeerNames: FleetOperation = {
  reason: 'fleet: normalize peer names',
  plan: (nodes) => new Map(nodes.map((n) => [n.node_id, planPeerNames(n)])),
};

/** `escrowExpected`: an offline recovery key is configured, so every registered key should come with an escrow. */
export const migrateKeys = (escrowExpected: boolean): FleetOperation => ({
  reason: 'fleet: migrate keys',
  plan(nodes) {
    const keys = new Map(nodes.map((n) => [n.node_id, n.wireguard?.public_key ?? null]));
    return new Map(nodes.map((n) => [n.node_id, planKeys(n, (id) => keys.get(id), escrowExpected)]));
  },
});

export const migrateInternalPorts: FleetOperation = {
  reason: 'fleet: migrate internal ports',
  plan: (nodes) => planInternalPorts(nodes),
};

/**
 * Runs a fleet operation over every node (decommissioned ones too, so a
 * recommissioned node comes back migrated): decided on the nodes' streams, all
 * changed nodes written and re-materialised in one append. A dry run reports
 * the same changes and writes nothing. Idempotent: each plan leaves nothing
 * for a second run to change.
 */
export async function runFleetOperation(deps: FleetDeps, operation: FleetOperation, dryRun: boolean, metadata: EventMetadata): Promise<FleetOperationResult> {
  const outcome = await writeNodes(
    deps,
    (states) => {
      const plans = operation.plan(liveNodes(states));
      const nodes = new Map<string, NodeChanges>([...plans].map(([id, p]) => [id, { events: p.events }]));
      const details = mergeDetails([...plans.keys()].sort().map((id) => plans.get(id)!.details));
      return { nodes, reason: operation.reason, result: details };
    },
    metadata,
    { dryRun },
  );
  return { dry_run: dryRun, changed_nodes: outcome.changed, generations: outcome.generations, details: outcome.result };
}
