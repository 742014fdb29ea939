import type { PrefixFlaps } from '../../domain/telemetry/reports.js';
import type { FlapFeed, NodePrefixFlap } from '../../domain/flaps/prefix-rows.js';
import { nextPrefixRows, prefixKeyOf, type NextPrefixRow, type PreviousPrefixRow } from '../../domain/flaps/prefix-report.js';
import { reportChanges } from '../../domain/flaps/flap-stats.js';
import type pg from 'pg';
import { withTransaction, type Queryable } from '../db/pool.js';
import { FLAP_RATE_UPSERT, minuteOf } from './flap-rate.js';
import { PerNode } from './per-node.js';

/**
 * Writing a node's prefix flap report (tables of migrations 0002, 0003, 0018,
 * 0019): the report replaces the node's rows, and what the views derive from two
 * consecutive reports of the node is kept on the new rows: the changes since
 * the previous report, the seconds between the two (the rate's divisor), and
 * since when a key has been at alert strength.
 */

/**
 * What this process wrote as each node's latest prefix flap report (issue 30: a
 * report in one statement, without the transaction's lock and read): its rows as
 * the next report compares with them, its `captured_at`, and the version
 * (`xmin`) of the node's `prefix_flap_feeds` row it left. An entry is used only
 * while that row is still the version written (checked under the node's lock):
 * the rows and the feed are only ever written together, by `replacePrefixFlaps`.
 */
export class KnownFlapReports extends PerNode<KnownFlapReport> {}

export interface KnownFlapReport {
  previous: ReadonlyMap<string, PreviousPrefixRow>;
  fedAt: Date;
  xmin: string;
}

/** A write's outcome: the entries stored, and what the next report of the node can start from (undefined: a time PostgreSQL may read back otherwise). */
export interface FlapWrite {
  entries: number;
  known: KnownFlapReport | undefined;
}

/** Replaces the node's prefix flap table (call inside one transaction): the lock, one read of the previous report, one write. */
export async function replacePrefixFlaps(db: Queryable, flaps: PrefixFlaps, now: Date): Promise<FlapWrite> {
  // Two reports of one node at once would both read the same previous report: one at a time per node.
  // Its own statement: a statement's snapshot is taken before it waits, so the read after it must be another one.
  await db.query({ name: 'prefix-flaps-lock', text: `SELECT pg_advisory_xact_lock(hashtext('prefix_flaps ' || $1))`, values: [flaps.node_id] });
  const old = await db.query<{
    prefix: string | null;
    peer_asn: string | null;
    flaps: number | null;
    score: number;
    alert_since: Date | null;
    fed_at: Date | null;
  }>({
    name: 'prefix-flaps-previous',
    text: `WITH old AS (DELETE FROM prefix_flaps WHERE node_id = $1 RETURNING prefix, peer_asn, flaps, score, alert_since)
           SELECT o.*, f.captured_at AS fed_at FROM (SELECT captured_at FROM prefix_flap_feeds WHERE node_id = $1) f FULL JOIN old o ON true`,
    values: [flaps.node_id],
  });
  const next = nextPrefixRows(flaps, previousRows(old.rows), old.rows[0]?.fed_at ?? null);
  const { rows } = await db.query({
    name: 'prefix-flaps-write',
    text: `WITH rows AS (${ROWS_INSERT('true')}),
     feed AS (
       INSERT INTO prefix_flap_feeds (node_id, feed_state, entries, captured_at, received_at, total_changes, interval_s) VALUES ($1, $14, $15, $2, $16, $17, $18)
       ON CONFLICT (node_id) DO UPDATE SET feed_state = EXCLUDED.feed_state, entries = EXCLUDED.entries, captured_at = EXCLUDED.captured_at,
         received_at = EXCLUDED.received_at, total_changes = EXCLUDED.total_changes, interval_s = EXCLUDED.interval_s
       RETURNING xmin::text AS xmin
     ), rate AS (${FLAP_RATE_UPSERT('$19', '$20', '$21', '$22')})
     SELECT xmin FROM feed`,
    values: writeValues(flaps, next, now),
  });
  return { entries: next.rows.length, known: knownAfter(flaps, next.rows, rows[0].xmin) };
}

/**
 * `replacePrefixFlaps` in one statement on what this process wrote last (or
 * read: `known`), outside a transaction: the node's lock, then the write only if
 * the feed row is still at `known.xmin`. When another instance wrote since,
 * nothing is written and the node's report as the statement saw it is answered
 * (`stale`), to compare with and write on again; undefined when there is none
 * (the caller then writes the long way).
 */
export async function replaceOverKnown(
  db: Queryable,
  flaps: PrefixFlaps,
  now: Date,
  known: KnownFlapReport,
): Promise<FlapWrite | { stale: KnownFlapReport } | undefined> {
  const next = nextPrefixRows(flaps, known.previous, known.fedAt);
  const written = 'EXISTS (SELECT 1 FROM feed)';
  // The lock is taken before the feed row (the join needs its row first), as the transaction does; the old rows
  // are deleted before the new ones are inserted (the insert waits for the count of the deleted: the same keys).
  const { rows } = await db.query<{
    written: boolean;
    xmin: string;
    fed_at: Date | null;
    prefix: string | null;
    peer_asn: string | null;
    flaps: number | null;
    score: number;
    alert_since: Date | null;
  }>({
    name: 'prefix-flaps-write-over-known',
    text: `WITH lock AS (SELECT pg_advisory_xact_lock(hashtext('prefix_flaps ' || $1))),
     feed AS (
       UPDATE prefix_flap_feeds f SET feed_state = $14, entries = $15, captured_at = $2, received_at = $16, total_changes = $17, interval_s = $18
       FROM lock WHERE f.node_id = $1 AND f.xmin = $23::xid RETURNING f.xmin::text AS xmin
     ),
     old AS (DELETE FROM prefix_flaps WHERE node_id = $1 AND ${written} RETURNING 1),
     rows AS (${ROWS_INSERT(`${written} AND (SELECT count(*) FROM old) >= 0`)}),
     rate AS (${FLAP_RATE_UPSERT(`($19::boolean AND ${written})`, '$20', '$21', '$22')})
     SELECT true AS written, xmin, NULL::timestamptz AS fed_at, NULL AS prefix, NULL::bigint AS peer_asn, NULL::int AS flaps, NULL::float8 AS score, NULL::timestamptz AS alert_since
       FROM feed
     UNION ALL
     SELECT false, f.xmin::text, f.captured_at, p.prefix, p.peer_asn, p.flaps, p.score, p.alert_since
       FROM prefix_flap_feeds f LEFT JOIN prefix_flaps p ON p.node_id = f.node_id
       WHERE f.node_id = $1 AND f.xmin <> $23::xid AND NOT ${written}`,
    values: [...writeValues(flaps, next, now), known.xmin],
  });
  if (rows.length === 0) return undefined;
  if (!rows[0].written) return { stale: { previous: previousRows(rows), fedAt: rows[0].fed_at!, xmin: rows[0].xmin } };
  return { entries: next.rows.length, known: knownAfter(flaps, next.rows, rows[0].xmin) };
}

/** The previous report's rows by key, as read (a row without a prefix: none). */
function previousRows(rows: readonly (PreviousPrefixRow & { prefix: string | null; peer_asn: string | null })[]): Map<string, PreviousPrefixRow> {
  const previous = new Map<string, PreviousPrefixRow>();
  for (const r of rows) if (r.prefix !== null) previous.set(prefixKeyOf(r.prefix, r.peer_asn === null ? null : Number(r.peer_asn)), r);
  return previous;
}

/** The INSERT of a report's rows ($1 to $13 of `writeValues`), when `condition` holds. */
const ROWS_INSERT = (
  condition: string,
) => `INSERT INTO prefix_flaps (node_id, prefix, peer_asn, origin_asn, score, flaps, last_flap_at, captured_at, as_path, announcements, withdrawals, changes, alert_since)
       SELECT $1, f.prefix, f.peer_asn, f.origin_asn, f.score, f.flaps, f.last_flap_at, $2, CASE WHEN f.as_path IS NULL THEN NULL ELSE ARRAY(SELECT jsonb_array_elements_text(f.as_path)::bigint) END,
              f.announcements, f.withdrawals, f.changes, f.alert_since
       FROM unnest($3::text[], $4::bigint[], $5::bigint[], $6::float8[], $7::int[], $8::timestamptz[], $9::jsonb[], $10::int[], $11::int[], $12::int[], $13::timestamptz[])
         AS f(prefix, peer_asn, origin_asn, score, flaps, last_flap_at, as_path, announcements, withdrawals, changes, alert_since)
       WHERE ${condition}`;

function writeValues(flaps: PrefixFlaps, next: { rows: NextPrefixRow[]; interval_s: number | null }, now: Date): unknown[] {
  const e = next.rows;
  const changes = e.map((x) => x.changes);
  const [total, listed] = reportChanges(flaps.total_changes ?? null, changes);
  return [
    flaps.node_id,
    flaps.captured_at,
    e.map((x) => x.entry.prefix),
    e.map((x) => x.entry.peer_asn),
    e.map((x) => x.entry.origin_asn),
    e.map((x) => x.entry.score),
    e.map((x) => x.entry.flaps ?? null),
    e.map((x) => x.entry.last_flap_at ?? null),
    e.map((x) => (x.entry.as_path == null ? null : JSON.stringify(x.entry.as_path))),
    e.map((x) => x.entry.announcements ?? null),
    e.map((x) => x.entry.withdrawals ?? null),
    changes,
    e.map((x) => x.alert_since),
    flaps.feed_state,
    e.length,
    now,
    flaps.total_changes ?? null,
    next.interval_s,
    // Only an established feed's report counts in the flap rate.
    flaps.feed_state === 'established',
    minuteOf(now),
    total,
    listed,
  ];
}

/** Sub-millisecond digits: PostgreSQL keeps them, a JavaScript Date does not, so the stored time would not be the one remembered. */
const FINER_THAN_MS = /\.\d{4}/;

/** The rows as `replacePrefixFlaps` reads them back for the next report. */
function knownAfter(flaps: PrefixFlaps, rows: readonly NextPrefixRow[], xmin: string): KnownFlapReport | undefined {
  if (FINER_THAN_MS.test(flaps.captured_at)) return undefined;
  const previous = new Map<string, PreviousPrefixRow>();
  for (const r of rows)
    previous.set(prefixKeyOf(r.entry.prefix, r.entry.peer_asn), { flaps: r.entry.flaps ?? null, score: r.entry.score, alert_since: r.alert_since });
  return { previous, fedAt: new Date(flaps.captured_at), xmin };
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
