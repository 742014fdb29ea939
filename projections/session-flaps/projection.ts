import { fileURLToPath } from 'node:url';
import { addFlap, flapTime, isFlap, SESSION_FLAP, type TransitionKind } from '../../domain/flaps/session.js';
import type { NodeStatusEvent } from '../../domain/telemetry/health.js';
import type { BgpState } from '../../domain/telemetry/reports.js';
import type { RecordedEvent, TransactionContext } from '../../infra/eventstore/types.js';
import type { Projection } from '../runtime/projection.js';

/** Transitions kept per node (the node view lists at most 200). */
export const TRANSITIONS_KEPT_PER_NODE = 1000;

/**
 * `session_flaps` and `session_flap_transitions`: per BGP session, its
 * transitions and its flap score, from the `BgpSessionStateChanged` and
 * `BgpSessionRestarted` events of the node-status streams. A session's row
 * exists from its first sighting (from `unknown`: recorded, score 0); a
 * transition is a change between two real states (not the first sighting, not a
 * removal from the configuration) or a restart. A flap counts from its
 * transition's `captured_at` (the agent's snapshot time), never after the event's
 * recording time (the server clock of the report; domain/flaps/session.ts
 * `flapTime`), so snapshots delivered late score as old as they are, a clock
 * ahead inflates nothing, and a replay reproduces the scores. `score_at` is null
 * until the session's first flap: its `flap_score` is null until then.
 */
export const sessionFlapsProjection: Projection = {
  name: 'session-flaps',
  mode: 'inline',
  handles: ['BgpSessionStateChanged', 'BgpSessionRestarted'],
  tables: ['session_flaps', 'session_flap_transitions'],
  migrations: { name: 'session-flaps', dir: fileURLToPath(new URL('./migrations', import.meta.url)) },
  apply: applySessionFlap,
};

type SessionEvent = Extract<NodeStatusEvent, { type: 'BgpSessionStateChanged' | 'BgpSessionRestarted' }>;

interface Transition {
  kind: TransitionKind;
  from: BgpState;
  to: BgpState;
  capturedAt: Date;
}

function transitionOf(event: SessionEvent, recordedAt: Date): Transition | null {
  const capturedAt = event.data.captured_at ? new Date(event.data.captured_at) : recordedAt;
  if (event.type === 'BgpSessionRestarted') return { kind: 'restart', from: 'established', to: 'established', capturedAt };
  const { from, to } = event.data;
  if (from === 'unknown' || from === 'absent' || to === 'absent') return null;
  return { kind: 'state', from, to, capturedAt };
}

async function applySessionFlap(tx: TransactionContext, recorded: RecordedEvent): Promise<void> {
  const event = { type: recorded.type, data: recorded.data } as SessionEvent;
  const { node_id: nodeId, session } = event.data;
  const at = recorded.metadata.recordedAt ? new Date(recorded.metadata.recordedAt) : recorded.recordedAt;
  await tx.query(`INSERT INTO session_flaps (node_id, session) VALUES ($1, $2) ON CONFLICT DO NOTHING`, [nodeId, session]);
  const t = transitionOf(event, at);
  if (!t) return;
  const { rows } = await tx.query(`SELECT score, score_at FROM session_flaps WHERE node_id = $1 AND session = $2 FOR UPDATE`, [nodeId, session]);
  const flap = isFlap(t.kind, t.from, t.to);
  const stored = { score: Number(rows[0].score), at: rows[0].score_at ? new Date(rows[0].score_at) : null };
  const next = flap ? addFlap(stored, flapTime(event.data.captured_at, at), SESSION_FLAP.halfLifeSeconds) : stored;
  await tx.query(
    `UPDATE session_flaps SET transitions_total = transitions_total + 1, flaps_total = flaps_total + $3::int,
       last_transition_at = $4, score = $5, score_at = $6
     WHERE node_id = $1 AND session = $2`,
    [nodeId, session, flap ? 1 : 0, t.capturedAt, next.score, next.at],
  );
  await tx.query(`INSERT INTO session_flap_transitions (node_id, session, kind, from_state, to_state, captured_at) VALUES ($1, $2, $3, $4, $5, $6)`, [
    nodeId,
    session,
    t.kind,
    t.from,
    t.to,
    t.capturedAt,
  ]);
  await tx.query(
    `DELETE FROM session_flap_transitions WHERE node_id = $1 AND id <= (
       SELECT id FROM session_flap_transitions WHERE node_id = $1 ORDER BY id DESC OFFSET $2 LIMIT 1)`,
    [nodeId, TRANSITIONS_KEPT_PER_NODE],
  );
}
