import { decideAutopeeringPolicy, type PolicyChange } from '../domain/autopeering/policy-decide.js';
import type { EventMetadata } from '../infra/eventstore/types.js';
import type { FleetDeps } from './fleet-write.js';
import { writeNode } from './node-write.js';

/**
 * Sets a node's autopeering policy: one append to the node stream. A policy is
 * not part of the desired state, so nothing is materialised and no doorbell rings.
 */
export async function setAutopeeringPolicy(deps: FleetDeps, nodeId: string, change: PolicyChange, metadata: EventMetadata): Promise<void> {
  await writeNode(
    deps,
    nodeId,
    ({ state }) => ({
      events: decideAutopeeringPolicy(state, nodeId, change),
      reason: `autopeering policy ${change.kind === 'replace' ? 'replaced' : 'patched'}`,
      result: undefined,
    }),
    metadata,
  );
}
