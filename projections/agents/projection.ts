import { fileURLToPath } from 'node:url';
import { AGENT_TOKEN_EVENT_TYPES, type AgentTokenEvent } from '../../domain/agent/agent-token.js';
import { ENROLLMENT_EVENT_TYPES, type EnrollmentEvent } from '../../domain/agent/enrollment.js';
import { REGISTRATION_EVENT_TYPES, type RegistrationEvent } from '../../domain/agent/registration.js';
import { unreachable } from '../../domain/decider.js';
import type { RecordedEvent, TransactionContext } from '../../infra/eventstore/types.js';
import { eventTime, type Projection } from '../runtime/projection.js';

type AgentEvent = AgentTokenEvent | EnrollmentEvent | RegistrationEvent | { type: 'NodeDeleted'; data: { node_id: string } };

/**
 * Agent tokens, enrollment tokens and registrations, inline: a token works in the
 * request right after the one that issued it, and resolving an agent's Bearer is
 * one primary-key read here instead of a replay of its stream.
 */
export const agentsProjection: Projection = {
  name: 'agents',
  mode: 'inline',
  handles: [...AGENT_TOKEN_EVENT_TYPES, ...ENROLLMENT_EVENT_TYPES, ...REGISTRATION_EVENT_TYPES, 'NodeDeleted'],
  tables: ['registrations', 'enrollment_tokens', 'agent_tokens'],
  migrations: { name: 'agents', dir: fileURLToPath(new URL('./migrations', import.meta.url)) },
  async apply(tx, recorded) {
    await applyAgentEvent(tx, { type: recorded.type, data: recorded.data } as AgentEvent, recorded);
  },
};

async function applyAgentEvent(tx: TransactionContext, event: AgentEvent, recorded: RecordedEvent): Promise<void> {
  const at = eventTime(recorded);
  // The event's global position orders rows created at the same instant, identically after a rebuild.
  const position = [recorded.position.tx.toString(), recorded.position.pos.toString()];
  switch (event.type) {
    case 'AgentTokenIssued': {
      const d = event.data;
      await tx.query(
        `INSERT INTO agent_tokens (token_id, node_id, agent_id, secret_sha256, issued_at, expires_at, rotated_from, tx, pos) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
        [d.token_id, d.node_id, d.agent_id, d.secret_sha256, d.issued_at, d.expires_at, d.rotated_from, ...position],
      );
      return;
    }
    case 'AgentTokenRevoked':
      await tx.query(`UPDATE agent_tokens SET revoked_at = COALESCE(revoked_at, $2), replaced_by = $3 WHERE token_id = $1`, [
        event.data.token_id,
        event.data.revoked_at,
        event.data.replaced_by,
      ]);
      return;
    case 'NodeDeleted':
      // A deleted node's tokens die with it, so a node created again under the same id starts without credentials.
      await tx.query(`UPDATE agent_tokens SET revoked_at = $2 WHERE node_id = $1 AND revoked_at IS NULL`, [event.data.node_id, at]);
      return;
    case 'EnrollmentTokenCreated': {
      const d = event.data;
      await tx.query(
        `INSERT INTO enrollment_tokens (token_id, secret_sha256, node_id, description, expires_at, created_at, tx, pos) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
        [d.token_id, d.secret_sha256, d.node_id, d.description, d.expires_at, d.created_at, ...position],
      );
      return;
    }
    case 'EnrollmentTokenUsed':
      await tx.query(`UPDATE enrollment_tokens SET used_at = $2, used_by_registration = $3 WHERE token_id = $1`, [
        event.data.token_id,
        event.data.used_at,
        event.data.registration_id,
      ]);
      return;
    case 'EnrollmentTokenDeleted':
      await tx.query(`DELETE FROM enrollment_tokens WHERE token_id = $1`, [event.data.token_id]);
      return;
    case 'RegistrationRequested': {
      const d = event.data;
      await tx.query(
        `INSERT INTO registrations (registration_id, node_id, status, hostname, inventory, via, enrollment_token_id, client_address, requests, first_seen_at, last_seen_at, tx, pos)
         VALUES ($1, $2, 'pending', $3, $4, $5, $6, $7, 1, $8, $8, $9, $10)
         ON CONFLICT (registration_id) DO UPDATE SET hostname = $3, inventory = $4, via = $5, enrollment_token_id = $6, client_address = $7,
           requests = registrations.requests + 1, last_seen_at = $8`,
        [d.registration_id, d.node_id, d.inventory.hostname, d.inventory, d.via, d.enrollment_token_id, d.client_address, d.at, ...position],
      );
      return;
    }
    case 'RegistrationApproved':
    case 'RegistrationRejected':
      await tx.query(`UPDATE registrations SET status = $2, note = $3, decided_by = $4, decided_at = $5 WHERE registration_id = $1`, [
        event.data.registration_id,
        event.type === 'RegistrationApproved' ? 'approved' : 'rejected',
        event.data.note,
        event.data.by,
        event.data.at,
      ]);
      return;
    case 'RegistrationAccepted':
      await tx.query(`UPDATE registrations SET agent_id = $2, agent_token_id = $3, accepted_at = $4 WHERE registration_id = $1`, [
        event.data.registration_id,
        event.data.agent_id,
        event.data.token_id,
        event.data.at,
      ]);
      return;
    default:
      return unreachable(event);
  }
}
