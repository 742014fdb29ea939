import { expect } from 'chai';
import { startTelemetryJob, type TelemetryDeps } from '../../../commands/telemetry.js';
import { ensureTelemetryPartitions, pruneTelemetry, RETENTION_DAYS } from '../../../infra/telemetry/retention.js';
import {
  archiveInterfaceTraffic,
  archiveSelfMetrics,
  insertRoutingTable,
  insertStatusEvent,
  insertWireguardTraffic,
  trafficTotals,
} from '../../../infra/telemetry/store.js';
import { refreshFleetRouting } from '../../../infra/telemetry/routing-fleet.js';
import type { RuntimeSnapshot } from '../../../domain/telemetry/reports.js';
import { createTestSystem, type TestSystem } from '../../support/system.js';
import { eventually } from '../../support/wait.js';
import { snapshot } from '../../http/control/agent/telemetry-support.js';

const DAY = 86_400_000;
const TABLES = [
  'status_snapshots',
  'interface_traffic_samples',
  'self_metrics_samples',
  'wireguard_traffic_samples',
  'routing_observations',
  'routing_fleet_observations',
];

describe('Telemetry retention (60 days, single-instance job)', function () {
  this.timeout(30_000);
  let sys: TestSystem;
  let deps: TelemetryDeps;

  /** One row in every sample table, stamped `at`. */
  async function samplesAt(at: Date): Promise<void> {
    const s = snapshot('n1') as unknown as RuntimeSnapshot;
    await insertStatusEvent(sys.pool, 'n1', { kind: 'snapshot', generation: 1, status: 'ok', drift_count: null, payload: {} }, at);
    await archiveInterfaceTraffic(sys.pool, { ...s, interfaces: [s.interfaces[0]] }, at);
    await archiveSelfMetrics(sys.pool, s, at);
    const traffic = { node_id: 'n1', captured_at: at.toISOString(), peers: [{ interface: 'wg0', rx_bytes: 1, tx_bytes: 2 }] };
    await insertWireguardTraffic(sys.pool, traffic, trafficTotals(traffic), at);
    await insertRoutingTable(sys.pool, { node_id: 'n1', captured_at: at.toISOString(), rpki_observed: false, routes: [] }, at);
    await refreshFleetRouting(sys.pool, ['n1'], at.toISOString(), at);
  }

  async function counts(): Promise<Record<string, number>> {
    const out: Record<string, number> = {};
    for (const t of TABLES) out[t] = (await sys.pool.query(`SELECT count(*)::int AS n FROM ${t}`)).rows[0].n;
    return out;
  }
  const each = (n: number) => Object.fromEntries(TABLES.map((t) => [t, n]));

  beforeEach(async () => {
    sys = await createTestSystem({ projections: [] });
    deps = { pool: sys.pool, store: sys.store, log: sys.log, background: sys.context.background };
  });
  afterEach(async () => sys?.close());

  it('deletes rows older than 60 days and keeps the rest', async () => {
    const now = sys.clock.now();
    await samplesAt(new Date(now.getTime() - RETENTION_DAYS * DAY - 1000));
    await samplesAt(new Date(now.getTime() - RETENTION_DAYS * DAY + 1000));
    await samplesAt(now);
    expect(await counts()).to.deep.equal(each(3));
    expect(await pruneTelemetry(sys.pool, now)).to.deep.include(each(1));
    expect(await counts()).to.deep.equal(each(2));
  });

  it('drops the daily partitions that end before the cutoff and deletes only the older rows of the partition that holds it', async () => {
    const now = sys.clock.now();
    const cutoff = now.getTime() - RETENTION_DAYS * DAY;
    // Partitions made ahead of time, as the job makes them, for the days the rows fall in.
    for (const at of [cutoff - 2 * DAY, cutoff, now.getTime()]) await ensureTelemetryPartitions(sys.pool, new Date(at));
    const day = (t: number) => new Date(t).toISOString().slice(0, 10).replaceAll('-', '');
    const partitioned = ['wireguard_traffic_samples', 'interface_traffic_samples', 'interface_traffic_rollups', 'routing_observations'];
    const partitionOf = async (table: string, t: number) =>
      (await sys.pool.query(`SELECT to_regclass($1)::text AS p`, [`${table}_p${day(t)}`])).rows[0].p as string | null;
    for (const table of partitioned) expect(await partitionOf(table, cutoff - 2 * DAY)).to.equal(`${table}_p${day(cutoff - 2 * DAY)}`);

    const s = snapshot('n1') as unknown as RuntimeSnapshot;
    const rollup = (at: number) =>
      sys.pool.query(`INSERT INTO interface_traffic_rollups VALUES (300, 'n1', $1, 'wg0', 1, 2, 300)`, [new Date(Math.floor(at / 300_000) * 300_000)]);
    for (const at of [cutoff - 2 * DAY, cutoff - 5 * 60_000, cutoff + 5 * 60_000, now.getTime()]) {
      const traffic = { node_id: 'n1', captured_at: new Date(at).toISOString(), peers: [{ interface: 'wg0', rx_bytes: 1, tx_bytes: 2 }] };
      await insertWireguardTraffic(sys.pool, traffic, trafficTotals(traffic), new Date(at));
      await archiveInterfaceTraffic(sys.pool, { ...s, interfaces: [s.interfaces[0]] }, new Date(at));
      await rollup(at);
      await insertRoutingTable(sys.pool, { node_id: 'n1', captured_at: new Date(at).toISOString(), rpki_observed: false, routes: [] }, new Date(at));
    }
    // Every row in a partition of its own day, none in the default partition.
    for (const table of partitioned) expect((await sys.pool.query(`SELECT count(*)::int AS n FROM ${table}_default`)).rows[0].n).to.equal(0);

    const deleted = await pruneTelemetry(sys.pool, now);
    for (const table of partitioned) {
      expect(deleted[table], table).to.equal(2);
      expect(await partitionOf(table, cutoff - 2 * DAY), table).to.equal(null);
      expect(await partitionOf(table, cutoff), table).to.equal(`${table}_p${day(cutoff)}`);
      expect((await sys.pool.query(`SELECT count(*)::int AS n FROM ${table}`)).rows[0].n, table).to.equal(2);
    }
  });

  it('archives a snapshot per 5-minute bucket: the first of the bucket, per interface and for the self metrics', async () => {
    const s = snapshot('n1') as unknown as RuntimeSnapshot;
    const start = sys.clock.now(); // 12:00:00, a bucket start
    for (const offset of [0, 60_000, 240_000, 299_999, 300_000, 360_000, 900_000]) {
      const at = new Date(start.getTime() + offset);
      await archiveInterfaceTraffic(sys.pool, s, at);
      await archiveSelfMetrics(sys.pool, s, at);
    }
    const times = async (sql: string) => (await sys.pool.query(sql)).rows.map((r) => (r.at as Date).toISOString());
    const buckets = ['2026-11-01T12:00:00.000Z', '2026-11-01T12:05:00.000Z', '2026-11-01T12:15:00.000Z'];
    expect(await times(`SELECT at FROM self_metrics_samples ORDER BY at`)).to.deep.equal(buckets);
    expect(await times(`SELECT at FROM interface_traffic_samples WHERE interface = 'eth0' ORDER BY at`)).to.deep.equal(buckets);
    expect((await sys.pool.query(`SELECT count(*)::int AS n FROM interface_traffic_samples`)).rows[0].n).to.equal(3 * s.interfaces.length);
  });

  it('runs as a periodic job on the injected clock', async () => {
    const start = sys.clock.now();
    await samplesAt(start);
    let runs = 0;
    const job = startTelemetryJob(deps, () => (runs++, sys.clock.now()), 50);
    try {
      // Barrier: a run that started has seen the clock; once a second one starts, the first one is over.
      await eventually(() => runs >= 2, { what: 'two runs of the job' });
      expect(await counts()).to.deep.equal(each(1));
      sys.clock.advance(RETENTION_DAYS * DAY + 1000);
      // One run prunes the tables one after the other: wait for the last of them.
      await eventually(
        async () => {
          expect(await counts()).to.deep.equal(each(0));
          return true;
        },
        { what: 'the job to prune every table', timeoutMs: 10_000 },
      );
    } finally {
      await job.stop();
    }
  });
});
