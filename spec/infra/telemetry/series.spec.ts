import { expect } from 'chai';
import type { RuntimeSnapshot } from '../../../domain/telemetry/reports.js';
import { pruneTelemetry, RETENTION_DAYS } from '../../../infra/telemetry/retention.js';
import { addReportToSeries, addSnapshotToSeries } from '../../../infra/telemetry/series.js';
import { snapshot } from '../../http/control/agent/telemetry-support.js';
import { createTestSystem, type TestSystem } from '../../support/system.js';

const DAY = 86_400_000;

/** A snapshot whose WireGuard interface `wg0` has counted `rx` bytes. */
const withCounter = (rx: number): RuntimeSnapshot => {
  const s = snapshot('n1', {}) as unknown as RuntimeSnapshot;
  return { ...s, interfaces: [{ name: 'wg0', up: true, rx_bytes: rx, tx_bytes: 0 }], wireguard_interfaces: [{ name: 'wg0', peers: [] }] };
};

describe('Series rollups (infra/telemetry/series.ts)', function () {
  this.timeout(30_000);
  let sys: TestSystem;
  beforeEach(async () => {
    sys = await createTestSystem({ projections: [] });
  });
  afterEach(async () => sys?.close());

  const fiveMinute = async () =>
    (
      await sys.pool.query(
        `SELECT extract(epoch FROM bucket)::int AS b, rx_bytes, traffic_seconds, metric_samples, reports, report_failures FROM node_series_rollups WHERE width_s = 300 ORDER BY bucket`,
      )
    ).rows;

  it('orders two snapshots of one node that arrive together: the same rollups as one after the other', async () => {
    const t0 = Date.parse('2026-11-01T12:00:00Z');
    await addSnapshotToSeries(sys.pool, withCounter(0), new Date(t0));
    const outcomes = await Promise.all([
      addSnapshotToSeries(sys.pool, withCounter(60_000), new Date(t0 + 60_000)),
      addSnapshotToSeries(sys.pool, withCounter(120_000), new Date(t0 + 120_000)),
    ]);
    // Whichever took the row lock first, the later one in agent time counts and the interval is covered once.
    expect(outcomes[1]).to.equal('added');
    const [row] = await fiveMinute();
    expect([row.rx_bytes, row.traffic_seconds]).to.deep.equal([120_000, 120]);
  });

  it('counts a repeated report once, and a failed one as a failure', async () => {
    const at = new Date('2026-11-01T12:00:00Z');
    expect(await addReportToSeries(sys.pool, 'n1', true, at)).to.equal('added');
    expect(await addReportToSeries(sys.pool, 'n1', true, at)).to.equal('late');
    expect(await addReportToSeries(sys.pool, 'n1', false, new Date(at.getTime() + 1000))).to.equal('added');
    const [row] = await fiveMinute();
    expect([row.reports, row.report_failures]).to.deep.equal([2, 1]);
  });

  it('prunes rollups and counters older than the retention with the samples', async () => {
    const now = sys.clock.now().getTime();
    const old = now - RETENTION_DAYS * DAY - 3_600_000;
    await addSnapshotToSeries(sys.pool, withCounter(0), new Date(old));
    await addSnapshotToSeries(sys.pool, withCounter(6000), new Date(old + 60_000));
    await addSnapshotToSeries(sys.pool, withCounter(12_000), new Date(now));
    const count = async (t: string) => (await sys.pool.query(`SELECT count(*)::int AS n FROM ${t}`)).rows[0].n;
    expect(await count('interface_traffic_rollups')).to.equal(4); // one bucket of each width
    const deleted = await pruneTelemetry(sys.pool, new Date(now));
    expect(deleted).to.deep.include({ interface_traffic_rollups: 4, interface_counters_latest: 0 });
    expect(deleted.node_series_rollups).to.equal(4); // the old 5 min, 1 h, 4 h and day buckets
    expect(await count('node_series_rollups')).to.equal(4);
    expect(await count('interface_counters_latest')).to.equal(1);
  });
});
