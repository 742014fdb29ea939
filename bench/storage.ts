// Storage of telemetry over time: one simulated day of a fleet (default 1,000
// nodes) written into the time-series tables in bulk, in time order, the rows
// shaped like those the ingest writes for telemetry-ingest's agents (14
// interfaces, 12 of them WireGuard, snapshots every 60 s, WireGuard traffic every
// 30 s, a routing table every 5 minutes), then a retention pass 60 days later.
//
// Per table: bytes on disk the day added (pg_total_relation_size after VACUUM
// ANALYZE), the steady-state size at 60 days (60 such days), and the retention
// pass that removes the day: its time, and, as baseline in the same run, the
// time of removing the same WireGuard rows the old way (DELETE, then VACUUM) from
// an unpartitioned copy.
import { changesBetween } from '../domain/telemetry/changes.js';
import { COMPACT_AFTER_MS, COMPACTED_RETAINED_TABLES, compactTelemetry } from '../infra/telemetry/compaction.js';
import { telemetryMigrations } from '../infra/telemetry/migrations.js';
import { ensureTelemetryPartitions, pruneTelemetry, RETENTION_DAYS } from '../infra/telemetry/retention.js';
import { storeRoutingAnalytics } from '../infra/telemetry/routing.js';
import { addSnapshotToSeries } from '../infra/telemetry/series.js';
import { upsertSnapshot } from '../infra/telemetry/store.js';
import type { RoutingTable, RuntimeSnapshot } from '../domain/telemetry/reports.js';
import { envInt, now, progress, report, round, withBenchDatabase, type Benchmark } from './support.js';

const DAY_MS = 86_400_000;
const DAY = Date.parse('2026-11-01T00:00:00Z');
/** Interfaces of a snapshot (eth0, lo and the WireGuard ones) and the WireGuard ones, as telemetry-ingest's agents report them. */
const INTERFACES = 14;
const WIREGUARD = 12;
const ROUTES = 1500;

/** The tables a day writes, with what a day at the real intervals puts in them. */
const WRITTEN = [
  'status_snapshots',
  'status_bases',
  'wireguard_traffic_samples',
  'interface_traffic_samples',
  'interface_traffic_rollups',
  'routing_observations',
] as const;
/** With the tables the compaction writes (compaction.ts). */
const TABLES: readonly string[] = [...WRITTEN, ...COMPACTED_RETAINED_TABLES.map((t) => t.table)];
/** A counter's noise: the low 16 bits of a hash of the node, the time and a salt (real counters do not grow by a constant). */
const noise = (t: string, salt: number) => `(hashint8(n::bigint * ${salt} + extract(epoch FROM ${t})::bigint) & 65535)`;

/** A runtime snapshot body as telemetry-ingest's agents send it; `__AT__` and `__B__` (a byte counter) vary per row. */
function snapshotTemplate(): string {
  const key = (i: number) => `${i.toString(36).padStart(8, 'k').repeat(6).slice(0, 42)}A=`;
  return JSON.stringify({
    node_id: '__NODE__',
    generation: 3,
    captured_at: '__AT__',
    containers: ['bird', 'wireguard', 'agent'].map((name) => ({ name, state: 'running', image: `${name}:1.0` })),
    interfaces: [
      { name: 'eth0', up: true, mtu: 1500, rx_bytes: '__B__', tx_bytes: '__B__' },
      { name: 'lo', up: true, mtu: 65536, rx_bytes: 1000, tx_bytes: 1000 },
      ...Array.from({ length: WIREGUARD }, (_, p) => ({ name: `dn42_p${p}`, up: true, mtu: 1420, rx_bytes: '__B__', tx_bytes: '__B__' })),
    ],
    wireguard_interfaces: Array.from({ length: WIREGUARD }, (_, p) => ({
      name: `dn42_p${p}`,
      public_key: key(p),
      listen_port: 51800 + p,
      peers: [{ public_key: key(p + 100), endpoint: `198.51.100.${p + 1}:51820`, latest_handshake_at: '__AT__', rx_bytes: '__B__', tx_bytes: '__B__' }],
    })),
    bgp_protocols: Array.from({ length: 16 }, (_, s) => ({
      name: `dn42_p${s % WIREGUARD}_v${s < WIREGUARD ? 6 : 4}`,
      state: 'established',
      since: '2026-11-01T10:00:00Z',
      remote_asn: 4242420000 + s,
      routes_imported: 90,
      routes_exported: 1400,
    })),
    self_metrics: { cpu: 1.5, rss: 60_000_000, total_failures: 0, log_warning_count: 1, log_error_count: 0, last_error_at: null, last_error_message: null },
  }).replaceAll('"__B__"', '__B__');
}

/**
 * What a snapshot stores (domain/telemetry/changes.ts) against its day's base: the
 * template's changes between two bodies whose counters and times differ, with the
 * placeholders put back.
 */
function changeTemplate(template: string): string {
  const body = (b: string, at: string) => JSON.parse(template.replaceAll('__B__', b).replaceAll('__AT__', at).replaceAll('__NODE__', 'tn0000'));
  const change = changesBetween(body('1000', '2026-11-01T00:00:00Z'), body('999999999999', '2099-01-01T00:00:00Z'));
  return JSON.stringify(change).replaceAll('999999999999', '__B__').replaceAll('2099-01-01T00:00:00Z', '__AT__');
}

/**
 * One hour of the fleet's rows, table by table, in time order (as they arrive).
 * $1 nodes, $2 hour start. Node i's timers are spread over each interval.
 */
function hourStatements(): Record<(typeof WRITTEN)[number], string> {
  const nodes = `generate_series(0, $1::int - 1) AS n`;
  const node = `'tn' || lpad(n::text, 4, '0')`;
  return {
    // A snapshot a minute: what it changed against its day's base (the day's first body, made in the first hour).
    status_snapshots: `INSERT INTO status_snapshots (node_id, kind, generation, status, drift_count, change, created_at)
      SELECT ${node}, 'snapshot', 3, 'ok', NULL,
        replace(replace($3::text, '__AT__', to_char(t AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')),
          '__B__', (1000000 + extract(epoch FROM t)::bigint * 1700 + ${noise('t', 7919)})::text)::jsonb, t
      FROM generate_series($2::timestamptz, $2::timestamptz + interval '59 minutes', interval '1 minute') AS m, ${nodes},
        LATERAL (SELECT m + (n % 60) * interval '1 second') AS x(t)
      ORDER BY t, n`,
    status_bases: `INSERT INTO status_bases (node_id, kind, day, body)
      SELECT ${node}, 'snapshot', ($2::timestamptz AT TIME ZONE 'UTC')::date,
        replace(replace(replace($3::text, '__NODE__', ${node}), '__AT__', to_char($2::timestamptz AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')),
          '__B__', (1000000 + n)::text)::jsonb
      FROM ${nodes}
      WHERE $2::timestamptz = date_trunc('day', $2::timestamptz AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'
      ORDER BY n`,
    wireguard_traffic_samples: `INSERT INTO wireguard_traffic_samples (node_id, at, rx_bytes, tx_bytes, peer_count)
      SELECT ${node}, t, 1000000 + extract(epoch FROM t)::bigint * 1700 + ${noise('t', 31)}, 2000000 + extract(epoch FROM t)::bigint * 3400 + ${noise('t', 37)}, ${WIREGUARD}
      FROM generate_series($2::timestamptz, $2::timestamptz + interval '59 minutes 30 seconds', interval '30 seconds') AS m, ${nodes},
        LATERAL (SELECT m + (n % 30) * interval '1 second') AS x(t)
      ORDER BY t, n`,
    interface_traffic_samples: `INSERT INTO interface_traffic_samples (node_id, interface, bucket, at, rx_bytes, tx_bytes)
      SELECT ${node}, CASE i WHEN 0 THEN 'eth0' WHEN 1 THEN 'lo' ELSE 'dn42_p' || (i - 2) END, b, b + (n % 60) * interval '1 second',
        1000000 + extract(epoch FROM b)::bigint * 1700 + ${noise('b', 41)} + i, 2000000 + extract(epoch FROM b)::bigint * 3400 + ${noise('b', 43)} + i
      FROM generate_series($2::timestamptz, $2::timestamptz + interval '55 minutes', interval '5 minutes') AS b, ${nodes},
        generate_series(0, ${INTERFACES - 1}) AS i
      ORDER BY b, n, i`,
    interface_traffic_rollups: `INSERT INTO interface_traffic_rollups (width_s, node_id, bucket, interface, rx_bytes, tx_bytes, seconds)
      SELECT w, ${node}, to_timestamp(floor(extract(epoch FROM b) / w) * w), 'dn42_p' || i, 1700.0 * w + ${noise('b', 47)}::float8 * w / 300, 3400.0 * w + ${noise('b', 53)}::float8 * w / 300 + i, w
      FROM generate_series($2::timestamptz, $2::timestamptz + interval '55 minutes', interval '5 minutes') AS b, ${nodes},
        generate_series(0, ${WIREGUARD - 1}) AS i, unnest(ARRAY[300, 3600, 14400, 86400]) AS w
      WHERE extract(epoch FROM b)::bigint % w = 0
      ORDER BY b, n, i, w`,
    // The summary goes with the node's latest table (routing_tables), not with each observation.
    routing_observations: `INSERT INTO routing_observations (node_id, captured_at, received_at, size, size_v4, size_v6, rpki_observed, announced, withdrawn)
      SELECT ${node}, t, t, ${ROUTES}, ${ROUTES - ROUTES / 3}, ${ROUTES / 3}, true, n % 7, n % 5
      FROM generate_series($2::timestamptz, $2::timestamptz + interval '55 minutes', interval '5 minutes') AS m, ${nodes},
        LATERAL (SELECT m + (n % 300) * interval '1 second') AS x(t)
      ORDER BY t, n`,
  };
}

/** Latest-value tables the churn below rewrites (LATEST_VALUE_TABLES' busiest). */
const LATEST = ['node_status', 'interface_counters_latest', 'series_cursors', 'routing_routes', 'routing_tables'] as const;

/**
 * The latest-value tables under the ingest's churn, through the ingest's own
 * functions: `rounds` minutes of a snapshot per node (`upsertSnapshot`,
 * `addSnapshotToSeries`: node_status, interface_counters_latest, series_cursors)
 * and every 5 minutes a 1,500-route table for `routeNodes` nodes
 * (`storeRoutingAnalytics`: routing_routes replaced), with autovacuum running
 * as configured. Answers per table its size after the first round and after the
 * last, its dead rows at the end and the autovacuum runs it had.
 */
async function latestValueChurn(pool: import('pg').Pool, nodes: number, rounds: number, routeNodes: number, template: string) {
  const start = DAY + 2 * DAY_MS;
  const routes: RoutingTable['routes'] = Array.from({ length: ROUTES }, (_, r) => ({
    prefix: r % 3 === 0 ? `fd${(r % 250).toString(16).padStart(2, '0')}:${(r * 13).toString(16)}::/48` : `172.2${r % 4}.${(r >> 2) & 255}.${(r * 16) & 255}/28`,
    protocol: `dn42_p${r % WIREGUARD}`,
    origin_asn: 4242420000 + (r % 900),
    as_path: [4242420000 + (r % 900)],
    rpki: 'valid',
    local: r < 4,
  }));
  const sizes = async () => Object.fromEntries(await Promise.all(LATEST.map(async (t) => [t, await tableBytes(pool, t)] as const)));
  let first: Record<string, number> = {};
  for (let r = 0; r < rounds; r++) {
    progress(`storage: latest-value churn, round ${r + 1}/${rounds}`);
    const at = new Date(start + r * 60_000);
    const stamp = at.toISOString().replace(/\.\d+Z$/, 'Z');
    const work = Array.from({ length: nodes }, (_, n) => async () => {
      const nodeId = `tn${String(n).padStart(4, '0')}`;
      const snapshot = JSON.parse(
        template
          .replaceAll('__NODE__', nodeId)
          .replaceAll('__AT__', stamp)
          .replaceAll('__B__', String(1_000_000 + r * 102_000 + n)),
      ) as RuntimeSnapshot;
      await upsertSnapshot(pool, snapshot, at);
      await addSnapshotToSeries(pool, snapshot, at);
      if (r % 5 === 0 && n < routeNodes) await storeRoutingAnalytics(pool, 0, at, { node_id: nodeId, captured_at: stamp, rpki_observed: true, routes }, null);
    });
    // Four at a time, as the pool allows.
    for (let i = 0; i < work.length; i += 4) await Promise.all(work.slice(i, i + 4).map((w) => w()));
    if (r === 0) first = await sizes();
  }
  const last = await sizes();
  const { rows } = await pool.query(`SELECT relname, n_dead_tup, n_live_tup, autovacuum_count FROM pg_stat_user_tables WHERE relname = ANY($1)`, [LATEST]);
  const stats = new Map(rows.map((r: Record<string, any>) => [r.relname as string, r]));
  return Object.fromEntries(
    LATEST.map((t) => [
      t,
      {
        after_first_round_mb: round(first[t] / 1024 ** 2, 2),
        after_rounds_mb: round(last[t] / 1024 ** 2, 2),
        live_rows: Number(stats.get(t)?.n_live_tup ?? 0),
        dead_rows: Number(stats.get(t)?.n_dead_tup ?? 0),
        autovacuums: Number(stats.get(t)?.autovacuum_count ?? 0),
      },
    ]),
  );
}

async function tableBytes(pool: import('pg').Pool, table: string): Promise<number> {
  // A partitioned table's own size is 0: sum its partitions (and the parent's, for an unpartitioned one).
  const { rows } = await pool.query(
    `SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0)::bigint AS bytes FROM pg_class c
     WHERE c.oid = $1::regclass OR c.oid IN (SELECT inhrelid FROM pg_inherits WHERE inhparent = $1::regclass)`,
    [table],
  );
  return Number(rows[0].bytes);
}

/** Parameters of each table's statement for the hour starting at `hour`. */
function hourParams(table: (typeof WRITTEN)[number], nodes: number, hour: Date, template: string, change: string): unknown[] {
  if (table === 'status_snapshots') return [nodes, hour, change];
  if (table === 'status_bases') return [nodes, hour, template];
  return [nodes, hour];
}

export const storageBench: Benchmark = {
  name: 'storage',
  description: 'one simulated day of 1,000 nodes in the time-series tables: bytes per day per table, 60-day steady state, retention pass vs DELETE',
  async run() {
    const nodes = envInt('BENCH_STORAGE_NODES', 1000);
    const hours = envInt('BENCH_STORAGE_HOURS', 24);
    await withBenchDatabase({ poolSize: 4, migrations: [telemetryMigrations] }, async ({ pool }) => {
      await ensureTelemetryPartitions(pool, new Date(DAY));
      await pool.query('VACUUM ANALYZE');
      const before = new Map(await Promise.all(TABLES.map(async (t) => [t, await tableBytes(pool, t)] as const)));
      const statements = hourStatements();
      const template = snapshotTemplate();
      const change = changeTemplate(template);
      const rows: Record<string, number> = {};
      const writeSeconds: Record<string, number> = {};
      const compactSeconds: number[] = [];
      const compacted: Record<string, number> = {};
      const compact = async (at: Date) => {
        const t0 = now();
        for (const [table, n] of Object.entries(await compactTelemetry(pool, at))) compacted[table] = (compacted[table] ?? 0) + n;
        compactSeconds.push((now() - t0) / 1000);
      };
      for (let h = 0; h < hours; h++) {
        progress(`storage: hour ${h + 1}/${hours} of ${nodes} nodes`);
        for (const table of WRITTEN) {
          const t0 = now();
          const result = await pool.query(statements[table], hourParams(table, nodes, new Date(DAY + h * 3_600_000), template, change));
          rows[table] = (rows[table] ?? 0) + (result.rowCount ?? 0);
          writeSeconds[table] = (writeSeconds[table] ?? 0) + (now() - t0) / 1000;
        }
        // The telemetry job's pass that folds the hour before (10 minutes after its end, while the next one is written).
        if (h > 0) await compact(new Date(DAY + h * 3_600_000 + COMPACT_AFTER_MS));
      }
      // The day's last hour, and the rollups of 4 hours and a day, once closed.
      await compact(new Date(DAY + hours * 3_600_000 + COMPACT_AFTER_MS));
      progress('storage: VACUUM ANALYZE');
      await pool.query('VACUUM ANALYZE');
      // A shorter run (BENCH_STORAGE_HOURS) is scaled to a day.
      const scale = 24 / hours;
      const perDay = Object.fromEntries(await Promise.all(TABLES.map(async (t) => [t, ((await tableBytes(pool, t)) - before.get(t)!) * scale] as const)));
      const dayBytes = Object.values(perDay).reduce((a, b) => a + b, 0);

      // The same WireGuard rows the old way: an unpartitioned copy, DELETE, then VACUUM.
      progress('storage: baseline, DELETE of the day from an unpartitioned copy');
      await pool.query(`CREATE TABLE bench_wireguard_unpartitioned (LIKE wireguard_traffic_samples INCLUDING DEFAULTS INCLUDING CONSTRAINTS)`);
      await pool.query(`ALTER TABLE bench_wireguard_unpartitioned ADD PRIMARY KEY (node_id, at)`);
      await pool.query(`CREATE INDEX ON bench_wireguard_unpartitioned (at)`);
      // The day's samples, folded by now: unfolded back into rows.
      await pool.query(`INSERT INTO bench_wireguard_unpartitioned (node_id, at, rx_bytes, tx_bytes, peer_count)
        SELECT h.node_id, h.hour + u.us * interval '1 microsecond', u.rx, u.tx, u.pc
        FROM wireguard_traffic_hours h, unnest(telemetry_undelta(h.at_us), telemetry_undelta(h.rx_bytes), telemetry_undelta(h.tx_bytes), h.peer_count) AS u(us, rx, tx, pc)
        UNION ALL SELECT node_id, at, rx_bytes, tx_bytes, peer_count FROM wireguard_traffic_samples ORDER BY 2`);
      await pool.query(`VACUUM ANALYZE bench_wireguard_unpartitioned`);
      const retentionAt = new Date(DAY + (RETENTION_DAYS + 1) * DAY_MS + 3_600_000);
      const cutoff = new Date(retentionAt.getTime() - RETENTION_DAYS * DAY_MS);
      let t0 = now();
      const baselineDeleted = (await pool.query(`DELETE FROM bench_wireguard_unpartitioned WHERE at < $1`, [cutoff])).rowCount ?? 0;
      const baselineDeleteS = (now() - t0) / 1000;
      t0 = now();
      await pool.query(`VACUUM bench_wireguard_unpartitioned`);
      const baselineVacuumS = (now() - t0) / 1000;
      const baselineLeftBytes = await tableBytes(pool, 'bench_wireguard_unpartitioned');

      progress('storage: retention pass 60 days later');
      t0 = now();
      const deleted = await pruneTelemetry(pool, retentionAt);
      const retentionS = (now() - t0) / 1000;
      const left = Object.fromEntries(await Promise.all(TABLES.map(async (t) => [t, await tableBytes(pool, t)] as const)));
      const mbOf = (bytes: number) => round(bytes / 1024 ** 2, 1);
      const churnRounds = envInt('BENCH_STORAGE_CHURN_MINUTES', 15);
      const routeNodes = Math.min(nodes, envInt('BENCH_STORAGE_ROUTE_NODES', 200));
      const latest = churnRounds > 0 ? await latestValueChurn(pool, nodes, churnRounds, routeNodes, template) : null;
      report({
        bench: 'storage',
        nodes,
        simulated_hours: hours,
        load_average: (await import('node:os')).loadavg().map((l) => round(l, 1)),
        growth_per_day_mb: mbOf(dayBytes),
        growth_per_day_gb: round(dayBytes / 1024 ** 3, 2),
        steady_state_60_days_gb: round((dayBytes * RETENTION_DAYS) / 1024 ** 3, 1),
        tables_per_day_mb: Object.fromEntries(TABLES.map((t) => [t, mbOf(perDay[t])])),
        bytes_per_sample: Object.fromEntries(WRITTEN.map((t) => [t, round(perDay[t] / scale / Math.max(1, rows[t]), 1)])),
        rows_per_day: Object.fromEntries(TABLES.map((t) => [t, Math.round((rows[t] ?? compacted[t] ?? 0) * scale)])),
        write_s: Object.fromEntries(WRITTEN.map((t) => [t, round(writeSeconds[t])])),
        compaction: {
          passes: compactSeconds.length,
          total_s: round(compactSeconds.reduce((a, b) => a + b, 0)),
          per_hour_pass_s: round(compactSeconds.slice(0, -1).reduce((a, b) => a + b, 0) / Math.max(1, compactSeconds.length - 1)),
          last_pass_s: round(compactSeconds[compactSeconds.length - 1]),
        },
        retention: {
          pass_s: round(retentionS),
          rows_removed: deleted,
          bytes_left_mb: Object.fromEntries(TABLES.map((t) => [t, mbOf(left[t])])),
          baseline: {
            name: 'DELETE then VACUUM of the same WireGuard rows, unpartitioned',
            rows: baselineDeleted,
            delete_s: round(baselineDeleteS),
            vacuum_s: round(baselineVacuumS),
            bytes_left_mb: mbOf(baselineLeftBytes),
          },
        },
        latest_value_churn: latest && { minutes: churnRounds, route_nodes: routeNodes, tables: latest },
        goal_gb_per_day: 0.5,
        meets_goal: dayBytes <= 0.5 * 1024 ** 3,
      });
    });
  },
};
