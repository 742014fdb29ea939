import { auditStreamId, type AuditRecorded } from '../domain/audit/events.js';
import type { EventMetadata, EventStore } from '../infra/eventstore/types.js';

/**
 * Appends one audit entry to the day's stream. Audit streams only grow and have no
 * invariant, so the append expects `any` version and never conflicts.
 */
export async function recordAudit(store: EventStore, entry: AuditRecorded['data'], metadata: EventMetadata, at: Date): Promise<void> {
  await store.append([{ streamId: auditStreamId(at), expected: 'any', events: [{ type: 'AuditRecorded', data: entry }] }], {
    ...metadata,
    actor: entry.actor,
    recordedAt: at.toISOString(),
  });
}
