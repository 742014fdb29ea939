import { foldMitigations, MITIGATIONS_STREAM, type MitigationEvent } from '../../domain/fleet-ops/mitigation-log.js';
import { planPeerDisable, planPeerEnable, sessionsOfAs, type PeerPlan } from '../../domain/fleet-ops/peer-sessions.js';
import { nodeDecider } from '../../domain/node/decide.js';
import type { LiveNode } from '../../domain/node/state.js';
import type { EventMetadata } from '../../infra/eventstore/types.js';
import type { FleetDeps } from '../fleet-write.js';
import { liveNodes, writeNodes } from '../node-write.js';

export interface PeerSessionView {
  id: number;
  node_id: string;
  name: string;
  remote_asn: number;
  enabled: boolean;
}

export interface PeerMitigationResult {
  asn: number;
  /** Every eBGP session of the AS after the write, by node id then id. */
  sessions: PeerSessionView[];
  changed: Record<string, number>;
}

/** `POST /fleet/mitigations/peer-disable`: every eBGP session of the AS off, in one append with the mitigation log entry. */
export function disablePeer(deps: FleetDeps, asn: number, metadata: EventMetadata): Promise<PeerMitigationResult> {
  return writePeer(deps, asn, 'disable', metadata);
}

/** `POST /fleet/mitigations/peer-enable`: the sessions peer-disable turned off back on, as they were. */
export function enablePeer(deps: FleetDeps, asn: number, metadata: EventMetadata): Promise<PeerMitigationResult> {
  return writePeer(deps, asn, 'enable', metadata);
}

async function writePeer(deps: FleetDeps, asn: number, how: 'disable' | 'enable', metadata: EventMetadata): Promise<PeerMitigationResult> {
  const outcome = await writeNodes(
    deps,
    async (states, more) => {
      const nodes = liveNodes(states);
      const tracked = foldMitigations((await more(MITIGATIONS_STREAM)).events as MitigationEvent[]).get(asn) ?? [];
      let plan: PeerPlan<unknown>;
      let logged: MitigationEvent[] = [];
      if (how === 'disable') {
        const disable = planPeerDisable(nodes, asn);
        if (disable.log.length > 0) logged = [{ type: 'PeerSessionsDisabled', data: { asn, sessions: disable.log } }];
        plan = disable;
      } else {
        const enable = planPeerEnable(nodes, asn, tracked);
        // Releasing the memory also drops sessions that were deleted or enabled by hand since.
        if (tracked.length > 0) logged = [{ type: 'PeerSessionsEnabled', data: { asn, restored: enable.log } }];
        plan = enable;
      }
      const after = nodes.map((n): LiveNode => (plan.events.get(n.node_id) ?? []).reduce(nodeDecider.evolve, n) as LiveNode);
      return {
        nodes: new Map([...plan.events].map(([id, events]) => [id, { events }])),
        reason: `fleet: peer ${how} AS${asn}`,
        also: [{ streamId: MITIGATIONS_STREAM, events: logged }],
        result: sessionsOfAs(after, asn).map(({ node_id, session }) => ({
          id: session.id,
          node_id,
          name: session.spec.name,
          remote_asn: session.spec.remote_asn,
          enabled: session.spec.enabled !== false,
        })),
      };
    },
    metadata,
  );
  return { asn, sessions: outcome.result, changed: outcome.generations };
}
