import { fileURLToPath } from 'node:url';
import { unreachable } from '../../domain/decider.js';
import { REQUEST_EVENT_TYPES, type RequestEvent } from '../../domain/autopeering/request.js';
import type { NodeEvent } from '../../domain/node/events.js';
import type { TransactionContext } from '../../infra/eventstore/types.js';
import { eventTime, type Projection } from '../runtime/projection.js';

type AutopeeringEvent = Extract<NodeEvent, { type: 'AutopeeringPolicySet' | 'NodeDeleted' }> | RequestEvent;

/**
 * Node policies and autopeering requests, written in the append's transaction
 * so that a PUT answers with the policy it just stored.
 */
export const autopeeringProjection: Projection = {
  name: 'autopeering',
  mode: 'inline',
  handles: ['AutopeeringPolicySet', 'NodeDeleted', ...REQUEST_EVENT_TYPES],
  tables: ['autopeering_requests', 'autopeering_policies'],
  migrations: { name: 'autopeering', dir: fileURLToPath(new URL('./migrations', import.meta.url)) },
  async apply(tx, recorded) {
    await applyAutopeeringEvent(tx, { type: recorded.type, data: recorded.data } as AutopeeringEvent, eventTime(recorded));
  },
};

async function applyAutopeeringEvent(tx: TransactionContext, event: AutopeeringEvent, at: Date): Promise<void> {
  switch (event.type) {
    case 'AutopeeringPolicySet':
      await tx.query(
        `INSERT INTO autopeering_policies (node_id, policy, updated_at) VALUES ($1, $2, $3)
         ON CONFLICT (node_id) DO UPDATE SET policy = EXCLUDED.policy, updated_at = EXCLUDED.updated_at`,
        [event.data.node_id, JSON.stringify(event.data.policy), at],
      );
      return;
    case 'NodeDeleted':
      // Requests stay for the audit; the policy belongs to the node that is gone.
      await tx.query(`DELETE FROM autopeering_policies WHERE node_id = $1`, [event.data.node_id]);
      return;
    case 'AutopeeringRequestProvisioned': {
      const r = event.data;
      await tx.query(
        `INSERT INTO autopeering_requests (id, node_id, asn, mntner, status, peering_id, form, record, created_at, updated_at)
         VALUES ($1, $2, $3, $4, 'provisioned', $5, $6, $7, $8, $8)`,
        [r.request_id, r.node_id, r.asn, r.mntner, r.peering_id, r.form, JSON.stringify(r), at],
      );
      return;
    }
    case 'AutopeeringRequestCancelled':
      await tx.query(`UPDATE autopeering_requests SET status = 'cancelled', cancelled_by = $2, reject_reason = $3, updated_at = $4 WHERE id = $1`, [
        event.data.request_id,
        event.data.by,
        event.data.reject_reason,
        at,
      ]);
      return;
    default:
      return unreachable(event);
  }
}
