import type { DomainEvent } from '../decider.js';

/**
 * An administrative request, recorded whatever its outcome (failed authentication
 * included) in the day's `audit-<yyyy-mm-dd>` stream. Who made it travels in the
 * event metadata (actor, request id, client address); the data is what was asked
 * and how it ended.
 */
export type AuditRecorded = DomainEvent<
  'AuditRecorded',
  {
    actor: string;
    method: string;
    path: string;
    status_code: number;
    detail: string | null;
  }
>;

export type AuditEvent = AuditRecorded;

export function auditStreamId(at: Date): string {
  return `audit-${at.toISOString().slice(0, 10)}`;
}
