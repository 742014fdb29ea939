import type { TransitionKind } from '../../domain/flaps/session.js';
import type { Queryable } from '../../infra/db/pool.js';

/** A session's flap record; `score` as of `score_at` (null: never flapped), to be decayed by the reader. */
export interface SessionFlapRecord {
  node_id: string;
  session: string;
  transitions_total: number;
  flaps_total: number;
  last_transition_at: string | null;
  score: number;
  score_at: Date | null;
}

export interface SessionTransitionRow {
  name: string;
  session: string;
  kind: TransitionKind;
  from_state: string;
  to_state: string;
  captured_at: string;
}

const iso = (t: Date | string | null) => (t === null ? null : new Date(t).toISOString());

/** Flap records by node id, then session name; `nodeIds` null: every node. */
export async function sessionFlapRecords(db: Queryable, nodeIds: readonly string[] | null): Promise<Map<string, Map<string, SessionFlapRecord>>> {
  const { rows } = await db.query(
    `SELECT node_id, session, transitions_total, flaps_total, last_transition_at, score, score_at FROM session_flaps
     WHERE $1::text[] IS NULL OR node_id = ANY($1::text[])`,
    [nodeIds],
  );
  const out = new Map<string, Map<string, SessionFlapRecord>>();
  for (const r of rows) {
    const record: SessionFlapRecord = {
      ...r,
      last_transition_at: iso(r.last_transition_at),
      score: Number(r.score),
      score_at: r.score_at ? new Date(r.score_at) : null,
    };
    if (!out.has(r.node_id)) out.set(r.node_id, new Map());
    out.get(r.node_id)!.set(r.session, record);
  }
  return out;
}

/** A node's transitions, newest first. `name` is the protocol name, as `session`. */
export async function sessionTransitions(db: Queryable, nodeId: string, limit: number): Promise<SessionTransitionRow[]> {
  const { rows } = await db.query(
    `SELECT session, kind, from_state, to_state, captured_at FROM session_flap_transitions WHERE node_id = $1 ORDER BY id DESC LIMIT $2`,
    [nodeId, limit],
  );
  return rows.map((r) => ({
    name: r.session,
    session: r.session,
    kind: r.kind,
    from_state: r.from_state,
    to_state: r.to_state,
    captured_at: iso(r.captured_at)!,
  }));
}
