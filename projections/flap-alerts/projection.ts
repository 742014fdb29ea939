import { fileURLToPath } from 'node:url';
import { FLAP_ALERT_EVENT_TYPES, keyString, type FlapAlertEvent } from '../../domain/flaps/alerts.js';
import type { RecordedEvent, TransactionContext } from '../../infra/eventstore/types.js';
import type { Projection } from '../runtime/projection.js';

/** Resolved alerts kept in the read model (document 3, Limits); older ones stay as events in the `flap-alerts` stream. */
export const RESOLVED_ALERTS_KEPT = 500;

/**
 * `flap_alerts`: one row per alert of the `flap-alerts` stream, open ones all,
 * resolved ones the latest 500 by resolution time. `flap_alerts_stream` holds
 * the stream version applied, for the alert job's state.
 */
export const flapAlertsProjection: Projection = {
  name: 'flap-alerts',
  mode: 'inline',
  handles: FLAP_ALERT_EVENT_TYPES,
  tables: ['flap_alerts', 'flap_alerts_stream'],
  migrations: { name: 'flap-alerts', dir: fileURLToPath(new URL('./migrations', import.meta.url)) },
  apply: applyFlapAlert,
};

async function applyFlapAlert(tx: TransactionContext, recorded: RecordedEvent): Promise<void> {
  const event = { type: recorded.type, data: recorded.data } as FlapAlertEvent;
  switch (event.type) {
    case 'FlapAlertOpened': {
      const { key, nodes, score, at, remote_asn } = event.data;
      await tx.query(
        `INSERT INTO flap_alerts (alert_id, kind, alert_key, node_id, session, prefix, peer_asn, nodes, peak_score, last_score, scored_at, started_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9, $10, $10)`,
        [
          recorded.version + 1,
          key.kind,
          keyString(key),
          key.kind === 'session' ? key.node_id : null,
          key.kind === 'session' ? key.session : null,
          key.kind === 'prefix' ? key.prefix : null,
          key.kind === 'prefix' ? key.peer_asn : (remote_asn ?? null),
          nodes,
          score,
          at,
        ],
      );
      break;
    }
    case 'FlapAlertResolved': {
      const { alert_id, nodes, peak_score, last_score, at, resolution } = event.data;
      await tx.query(
        `UPDATE flap_alerts SET nodes = $6, peak_score = $2, last_score = $3, scored_at = $4, resolved_at = $4, resolution = $5 WHERE alert_id = $1`,
        [alert_id, peak_score, last_score, at, resolution, nodes],
      );
      await tx.query(
        `DELETE FROM flap_alerts WHERE resolved_at IS NOT NULL AND alert_id NOT IN (
           SELECT alert_id FROM flap_alerts WHERE resolved_at IS NOT NULL ORDER BY resolved_at DESC, alert_id DESC LIMIT $1)`,
        [RESOLVED_ALERTS_KEPT],
      );
      break;
    }
  }
  await tx.query(
    `INSERT INTO flap_alerts_stream (one, version) VALUES (true, $1) ON CONFLICT (one) DO UPDATE SET version = GREATEST(flap_alerts_stream.version, EXCLUDED.version)`,
    [recorded.version],
  );
}
