import { fileURLToPath } from 'node:url';
import type { AuditRecorded } from '../../domain/audit/events.js';
import { eventTime, type Projection } from '../runtime/projection.js';

/** The audit log behind `GET /admin/audit-log`, written in the same transaction as the event. */
export const auditLogProjection: Projection = {
  name: 'audit_log',
  mode: 'inline',
  handles: ['AuditRecorded'],
  tables: ['audit_log'],
  migrations: { name: 'audit-log', dir: fileURLToPath(new URL('./migrations', import.meta.url)) },
  async apply(tx, event) {
    const data = event.data as AuditRecorded['data'];
    await tx.query(
      `INSERT INTO audit_log (id, actor, method, path, status_code, detail, request_id, client_address, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
      [
        event.position.pos.toString(),
        data.actor,
        data.method,
        data.path,
        data.status_code,
        data.detail,
        event.metadata.requestId ?? null,
        event.metadata.clientAddress ?? null,
        eventTime(event),
      ],
    );
  },
};
