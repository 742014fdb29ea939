import { BLOCKED_PREFIXES_MIN_AGENT, RPKI_MIN_AGENT, takesBlockedPrefixes, takesRpki } from '../../domain/fleet-ops/agent-gate.js';
import { blockedBy } from '../../domain/fleet-ops/prefix-block.js';
import type { EventMetadata } from '../../infra/eventstore/types.js';
import type { FleetDeps, Published } from '../fleet-write.js';
import { writeNode } from '../node-write.js';

/**
 * A heartbeat whose agent version crosses 1.0.187 (either way) re-publishes
 * the node when its template blocks prefixes: an upgraded agent gets the
 * blocks it was denied, and an agent rolled back by its health gate stops
 * getting a document it would refuse. Without this a deferred block would
 * wait for the node's next unrelated write. Crossing `RPKI_MIN_AGENT`
 * re-publishes every published node: every document carries `bird.rpki`
 * (or leaves it out). `previous` is the version the
 * liveness registry held before this heartbeat (undefined: first heartbeat).
 *
 * Race: two instances may see the same crossing (a reconnect moves the
 * socket); both publish, the second a generation with the same content.
 */
export async function republishOnAgentVersion(
  deps: FleetDeps,
  nodeId: string,
  previous: string | null | undefined,
  current: string | null,
  metadata: EventMetadata,
): Promise<Published[]> {
  const takes = takesBlockedPrefixes(current);
  const blocks = takesBlockedPrefixes(previous) !== takes;
  const rpki = takesRpki(current);
  const rpkiCrossed = takesRpki(previous) !== rpki;
  if (!blocks && !rpkiCrossed) return [];
  const reason = rpkiCrossed
    ? `agent ${current ?? 'without a version'} ${rpki ? 'takes' : 'predates'} the RPKI policy (${RPKI_MIN_AGENT})`
    : `agent ${current ?? 'without a version'} ${takes ? 'takes' : 'predates'} blocked_prefixes (${BLOCKED_PREFIXES_MIN_AGENT})`;
  const outcome = await writeNode(
    deps,
    nodeId,
    ({ state }) => ({
      reason,
      refresh: state.status === 'Live' && (rpkiCrossed || blockedBy(state.fields.base_template).length > 0),
      result: undefined,
    }),
    metadata,
  );
  return outcome.published;
}
