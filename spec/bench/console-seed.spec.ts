import { expect } from 'chai';
import { completeFleetRoutingHistory, OTHER_INTERFACES, seedTelemetryHistory, type SeedNode } from '../../bench/console-seed.js';
import { nodeId, seedFleet } from '../../bench/fleet-seed.js';
import type { RoutingTable, RuntimeSnapshot } from '../../domain/telemetry/reports.js';
import { addReportToSeries, addSnapshotToSeries } from '../../infra/telemetry/series.js';
import { interfacePeerings } from '../../projections/fleet/queries.js';
import { createTestSystem, type TestSystem } from '../support/system.js';

// The console-cost benchmark writes its month of telemetry in bulk SQL; this
// checks, on two hours of two nodes, that the bulk rows are what the report
// handlers' own functions write: the node's snapshots and reports, rebuilt from
// the seeded archives (counters, self metrics, status events), are replayed
// through addSnapshotToSeries/addReportToSeries and must give the same rollups.
describe('bench console-seed: the bulk telemetry history', function () {
  this.timeout(120_000);
  let sys: TestSystem;
  const end = new Date('2026-11-01T12:00:00Z');
  const start = new Date(end.getTime() - 2 * 3_600_000);
  let nodes: SeedNode[];

  before(async () => {
    sys = await createTestSystem();
    await seedFleet(sys, 2);
    const peerings = await interfacePeerings(sys.pool);
    const routes: RoutingTable['routes'] = [
      { prefix: '172.20.0.0/28', protocol: 'ext0', origin_asn: 4242420002, as_path: [4242421000, 4242420002], rpki: 'valid', local: false },
    ];
    nodes = [0, 1].map((i) => ({
      node_id: nodeId(i),
      wireguard: [...peerings.get(nodeId(i))!.keys()].sort(),
      routes: { node_id: nodeId(i), captured_at: end.toISOString(), rpki_observed: true, routes },
    }));
    const client = await sys.pool.connect();
    try {
      await seedTelemetryHistory(client, nodes, { start, end });
    } finally {
      client.release();
    }
  });
  after(() => sys?.close());

  const rollups = async (node: string) => ({
    node: (
      await sys.pool.query(
        `SELECT width_s, extract(epoch FROM bucket)::bigint AS b, rx_bytes, tx_bytes, traffic_seconds, cpu_sum, rss_sum, metric_samples, reports, report_failures
         FROM node_series_rollups WHERE node_id = $1 ORDER BY 1, 2`,
        [node],
      )
    ).rows,
    interfaces: (
      await sys.pool.query(
        `SELECT width_s, extract(epoch FROM bucket)::bigint AS b, interface, rx_bytes, tx_bytes, seconds FROM interface_traffic_rollups WHERE node_id = $1 ORDER BY 1, 2, 3`,
        [node],
      )
    ).rows,
    counters: (await sys.pool.query(`SELECT interface, at, rx_bytes, tx_bytes FROM interface_counters_latest WHERE node_id = $1 ORDER BY 1`, [node])).rows,
    cursor: (await sys.pool.query(`SELECT snapshot_at, report_at FROM series_cursors WHERE node_id = $1`, [node])).rows,
  });

  /** The node's snapshots, one a minute, rebuilt from the seeded 5-minute archives: counters move linearly inside a bucket. */
  async function snapshotsOf(node: SeedNode): Promise<RuntimeSnapshot[]> {
    const archive = (
      await sys.pool.query(
        `SELECT interface, at, rx_bytes::float8 AS rx, tx_bytes::float8 AS tx FROM interface_traffic_samples WHERE node_id = $1 ORDER BY at`,
        [node.node_id],
      )
    ).rows;
    const latest = (
      await sys.pool.query(`SELECT interface, at, rx_bytes::float8 AS rx, tx_bytes::float8 AS tx FROM interface_counters_latest WHERE node_id = $1`, [
        node.node_id,
      ])
    ).rows;
    const metrics = (
      await sys.pool.query(`SELECT at, cpu_percent, rss_bytes::float8 AS rss FROM self_metrics_samples WHERE node_id = $1 ORDER BY at`, [node.node_id])
    ).rows;
    const snapshots: RuntimeSnapshot[] = [];
    for (const m of metrics) {
      const b = m.at.getTime();
      for (let minute = 0; minute < 5 && b + minute * 60_000 < end.getTime(); minute++) {
        const at = b + minute * 60_000;
        const counter = (iface: string) => {
          const here = archive.find((r) => r.interface === iface && r.at.getTime() === b)!;
          const next = archive.find((r) => r.interface === iface && r.at.getTime() === b + 300_000);
          // Per minute: from the next bucket's first counters, or (last bucket) from the latest, four minutes on.
          const per = next
            ? { rx: (next.rx - here.rx) / 5, tx: (next.tx - here.tx) / 5 }
            : (({ rx, tx }) => ({ rx: (rx - here.rx) / 4, tx: (tx - here.tx) / 4 }))(latest.find((l) => l.interface === iface) ?? here);
          return { rx_bytes: here.rx + minute * per.rx, tx_bytes: here.tx + minute * per.tx };
        };
        snapshots.push({
          node_id: node.node_id,
          captured_at: new Date(at).toISOString(),
          containers: [],
          interfaces: [...node.wireguard, ...OTHER_INTERFACES].map((name) => ({ name, up: true, mtu: 1420, ...counter(name) })),
          wireguard_interfaces: node.wireguard.map((name) => ({
            name,
            public_key: 'wQzQn6qN5m0y0VZ8mY0aQkqf1mN0s2m0oQv0a8m0aE0=',
            listen_port: 21000,
            peers: [],
          })),
          bgp_protocols: [],
          self_metrics: {
            cpu: m.cpu_percent,
            rss: m.rss,
            total_failures: 0,
            log_warning_count: 1,
            log_error_count: 0,
            last_error_at: null,
            last_error_message: null,
          },
        } as unknown as RuntimeSnapshot);
      }
    }
    return snapshots;
  }

  it('gives the rollups, counters and cursors that replaying its snapshots and reports through the series functions gives', async () => {
    const node = nodes[0];
    const seeded = await rollups(node.node_id);
    expect(seeded.node.filter((r) => r.width_s === 300)).to.have.length(24);
    expect(seeded.node.filter((r) => r.width_s === 3600)).to.have.length(2);

    const snapshots = await snapshotsOf(node);
    const reports = (
      await sys.pool.query(`SELECT status, created_at FROM status_snapshots WHERE node_id = $1 AND kind = 'report' ORDER BY created_at`, [node.node_id])
    ).rows;
    expect(snapshots).to.have.length(120);
    expect(reports).to.have.length(24);
    for (const table of ['node_series_rollups', 'interface_traffic_rollups', 'interface_counters_latest', 'series_cursors']) {
      await sys.pool.query(`DELETE FROM ${table} WHERE node_id = $1`, [node.node_id]);
    }
    for (const s of snapshots) expect(await addSnapshotToSeries(sys.pool, s, new Date(s.captured_at))).to.equal('added');
    for (const r of reports) expect(await addReportToSeries(sys.pool, node.node_id, r.status === 'failed', r.created_at)).to.equal('added');

    const replayed = await rollups(node.node_id);
    const close = (a: Record<string, unknown>[], b: Record<string, unknown>[]) => {
      expect(a.length).to.equal(b.length);
      a.forEach((row, i) => {
        for (const [k, v] of Object.entries(row)) {
          if (typeof v === 'number') expect(b[i][k], `${k} of row ${i}`).to.be.closeTo(v, Math.abs(v) * 1e-9 + 1e-6);
          else expect(b[i][k], `${k} of row ${i}`).to.deep.equal(v);
        }
      });
    };
    close(replayed.node, seeded.node);
    close(replayed.interfaces, seeded.interfaces);
    close(replayed.counters, seeded.counters);
    close(replayed.cursor, seeded.cursor);
  });

  it('writes WireGuard sums every 30 s that sit on the interface counters, and routing observations every 5 minutes', async () => {
    const node = nodes[1];
    const { rows: sums } = await sys.pool.query(
      `SELECT w.at, w.rx_bytes::float8 AS rx, (SELECT sum(rx_bytes)::float8 FROM interface_traffic_samples i WHERE i.node_id = w.node_id AND i.at = w.at AND i.interface = ANY($2)) AS archived
       FROM wireguard_traffic_samples w WHERE w.node_id = $1 ORDER BY w.at`,
      [node.node_id, node.wireguard],
    );
    expect(sums).to.have.length(240);
    expect(sums.filter((s) => s.archived !== null)).to.have.length(24);
    for (const s of sums.filter((x) => x.archived !== null)) expect(s.rx).to.equal(s.archived);
    const { rows: observations } = await sys.pool.query(
      `SELECT count(*)::int AS n, count(summary)::int AS summaries FROM routing_observations WHERE node_id = $1`,
      [node.node_id],
    );
    expect(observations[0]).to.deep.equal({ n: 24, summaries: 24 });
    await completeFleetRoutingHistory(sys.pool);
    const { rows: fleet } = await sys.pool.query(`SELECT count(*)::int AS n FROM routing_fleet_observations`);
    expect(fleet[0].n).to.equal(24);
  });
});
