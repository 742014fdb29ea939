import type { PrefixFlaps } from '../../domain/telemetry/reports.js';
import type { FlapFeed, NodePrefixFlap } from '../../domain/flaps/prefix-rows.js';
import { PREFIX_ALERT_OPEN } from '../../domain/flaps/prefix-scores.js';
import { reportChanges } from '../../domain/flaps/flap-stats.js';
import type pg from 'pg';
import { withTransaction, type Queryable } from '../db/pool.js';
import { addReportToFlapRate } from './flap-rate.js';

/**
 * Writing a node's prefix flap report (tables of migrations 0002, 0003, 0018,
 * 0019): the report replaces the node's rows, and what the views derive from two
 * consecutive reports of the node is kept on the new rows: the changes since
 * the previous report, the seconds between the two (the rate's divisor), and
 * since when a key has been at alert strength.
 */

type Entry = PrefixFlaps['entries'][number];

interface Previous {
  flaps: number | null;
  score: number;
  alert_since: Date | null;
}

const keyOf = (prefix: string, peerAsn: number | null) => `${prefix} ${peerAsn}`;

/** (prefix, peer_asn) is the key, null peer_asn included; a report naming one twice keeps its higher score. */
function uniqueEntries(entries: readonly Entry[]): Entry[] {
  const byKey = new Map<string, Entry>();
  for (const entry of entries) {
    const key = keyOf(entry.prefix, entry.peer_asn);
    if ((byKey.get(key)?.score ?? -1) < entry.score) byKey.set(key, entry);
  }
  return [...byKey.values()];
}

/**
 * Changes of a key since the node's previous report: what the agent counted
 * (announcements + withdrawals), or for an older agent that omits them, how
 * much the cumulative `flaps` grew over the previous row. Null when unknown
 * (no previous report, key not in it, a counter that went down): never 0.
 */
function changesSincePrevious(entry: Entry, previous: Previous | undefined, hasBaseline: boolean): number | null {
  if (!hasBaseline) return null;
  const a = entry.announcements ?? null;
  const w = entry.withdrawals ?? null;
  if (a !== null || w !== null) return (a ?? 0) + (w ?? 0);
  const flaps = entry.flaps ?? null;
  if (!previous || previous.flaps === null || flaps === null || flaps < previous.flaps) return null;
  return flaps - previous.flaps;
}

/** Since when the key has been at alert strength: kept from the previous row while it stays there, this report's time when it just got there. */
function alertSince(entry: Entry, previous: Previous | undefined, capturedAt: Date): Date | null {
  if (entry.score < PREFIX_ALERT_OPEN) return null;
  return previous?.alert_since ?? capturedAt;
}

/** Replaces the node's prefix flap table (call inside one transaction). */
export async function replacePrefixFlaps(db: Queryable, flaps: PrefixFlaps, now: Date): Promise<number> {
  // Two reports of one node at once would both read the same previous report: one at a time per node.
  await db.query(`SELECT pg_advisory_xact_lock(hashtext('prefix_flaps ' || $1))`, [flaps.node_id]);
  const capturedAt = new Date(flaps.captured_at);
  const feed = await db.query<{ captured_at: Date }>(`SELECT captured_at FROM prefix_flap_feeds WHERE node_id = $1`, [flaps.node_id]);
  // A report not later than the previous one (a clock set back, a replay) has no interval to divide by.
  const intervalS = feed.rows.length ? (capturedAt.getTime() - feed.rows[0].captured_at.getTime()) / 1000 : null;
  const hasBaseline = intervalS !== null && intervalS > 0;
  const old = await db.query<{ prefix: string; peer_asn: string | null } & Previous>(
    `DELETE FROM prefix_flaps WHERE node_id = $1 RETURNING prefix, peer_asn, flaps, score, alert_since`,
    [flaps.node_id],
  );
  const previous = new Map(old.rows.map((r) => [keyOf(r.prefix, r.peer_asn === null ? null : Number(r.peer_asn)), r]));
  const e = uniqueEntries(flaps.entries);
  const before = e.map((x) => previous.get(keyOf(x.prefix, x.peer_asn)));
  const changes = e.map((x, i) => changesSincePrevious(x, before[i], hasBaseline));
  if (e.length) {
    await db.query(
      `INSERT INTO prefix_flaps (node_id, prefix, peer_asn, origin_asn, score, flaps, last_flap_at, captured_at, as_path, announcements, withdrawals, changes, alert_since)
       SELECT $1, f.prefix, f.peer_asn, f.origin_asn, f.score, f.flaps, f.last_flap_at, $2, CASE WHEN f.as_path IS NULL THEN NULL ELSE ARRAY(SELECT jsonb_array_elements_text(f.as_path)::bigint) END,
              f.announcements, f.withdrawals, f.changes, f.alert_since
       FROM unnest($3::text[], $4::bigint[], $5::bigint[], $6::float8[], $7::int[], $8::timestamptz[], $9::jsonb[], $10::int[], $11::int[], $12::int[], $13::timestamptz[])
         AS f(prefix, peer_asn, origin_asn, score, flaps, last_flap_at, as_path, announcements, withdrawals, changes, alert_since)`,
      [
        flaps.node_id,
        flaps.captured_at,
        e.map((x) => x.prefix),
        e.map((x) => x.peer_asn),
        e.map((x) => x.origin_asn),
        e.map((x) => x.score),
        e.map((x) => x.flaps ?? null),
        e.map((x) => x.last_flap_at ?? null),
        e.map((x) => (x.as_path == null ? null : JSON.stringify(x.as_path))),
        e.map((x) => x.announcements ?? null),
        e.map((x) => x.withdrawals ?? null),
        changes,
        e.map((x, i) => alertSince(x, before[i], capturedAt)),
      ],
    );
  }
  await db.query(
    `INSERT INTO prefix_flap_feeds (node_id, feed_state, entries, captured_at, received_at, total_changes, interval_s) VALUES ($1, $2, $3, $4, $5, $6, $7)
     ON CONFLICT (node_id) DO UPDATE SET feed_state = EXCLUDED.feed_state, entries = EXCLUDED.entries, captured_at = EXCLUDED.captured_at,
       received_at = EXCLUDED.received_at, total_changes = EXCLUDED.total_changes, interval_s = EXCLUDED.interval_s`,
    [flaps.node_id, flaps.feed_state, e.length, flaps.captured_at, now, flaps.total_changes ?? null, hasBaseline ? intervalS : null],
  );
  // Last: the minute's archive row is shared by every node's report, so its row lock is held as briefly as possible.
  if (flaps.feed_state === 'established') await addReportToFlapRate(db, now, ...reportChanges(flaps.total_changes ?? null, changes));
  return e.length;
}

export type { FlapFeed as StoredFlapFeed, NodePrefixFlap as StoredPrefixFlap };

const iso = (t: Date | null) => (t === null ? null : t.toISOString());
const asn = (v: string | null) => (v === null ? null : Number(v));

/** Every node's latest prefix flap rows and feeds, both from one snapshot (a report landing in between would mix two tables). */
export async function fleetPrefixFlaps(pool: pg.Pool): Promise<{ rows: NodePrefixFlap[]; feeds: FlapFeed[] }> {
  return withTransaction(pool, readPrefixFlaps, 'REPEATABLE READ');
}

/** The rows and feeds as `db` sees them: run it in a REPEATABLE READ transaction to have both (and whatever else it reads) from one snapshot. */
export async function readPrefixFlaps(db: Queryable): Promise<{ rows: NodePrefixFlap[]; feeds: FlapFeed[] }> {
  const rows = await db.query(
    `SELECT f.node_id, f.prefix, f.peer_asn, f.origin_asn, f.score, f.flaps, f.last_flap_at, f.captured_at, f.as_path, f.announcements, f.withdrawals,
            f.changes, f.alert_since, d.interval_s
     FROM prefix_flaps f LEFT JOIN prefix_flap_feeds d USING (node_id)`,
  );
  const feeds = await db.query(`SELECT node_id, feed_state, captured_at, received_at, total_changes FROM prefix_flap_feeds ORDER BY node_id`);
  return {
    rows: rows.rows.map((r: Record<string, any>) => ({
      node_id: r.node_id,
      prefix: r.prefix,
      peer_asn: asn(r.peer_asn),
      origin_asn: asn(r.origin_asn),
      score: r.score,
      flaps: r.flaps,
      last_flap_at: iso(r.last_flap_at),
      captured_at: iso(r.captured_at)!,
      as_path: r.as_path === null ? null : r.as_path.map(Number),
      announcements: r.announcements,
      withdrawals: r.withdrawals,
      changes: r.changes,
      interval_s: r.interval_s,
      alert_since: iso(r.alert_since),
    })),
    feeds: feeds.rows.map((r: Record<string, any>) => ({
      node_id: r.node_id,
      feed_state: r.feed_state,
      captured_at: iso(r.captured_at)!,
      received_at: iso(r.received_at)!,
      total_changes: r.total_changes,
    })),
  };
}
