import { expect } from 'chai';
import type { RuntimeSnapshot } from '../../../domain/telemetry/reports.js';
import { compactTelemetry } from '../../../infra/telemetry/compaction.js';
import { statusPointsSince } from '../../../infra/telemetry/node-trends.js';
import { ensureTelemetryPartitions, pruneTelemetry, RETENTION_DAYS } from '../../../infra/telemetry/retention.js';
import { interfaceArchive, interfaceBytesBetween, interfaceRates, interfaceTotals } from '../../../infra/telemetry/series-queries.js';
import { addSnapshotToSeries } from '../../../infra/telemetry/series.js';
import { carryVolatile } from '../../../infra/telemetry/status-compaction.js';
import { leanStatusEvents, statusEventById } from '../../../infra/telemetry/status-events.js';
import { archiveInterfaceTraffic, insertStatusEvent, insertWireguardTraffic, listStatusEvents } from '../../../infra/telemetry/store.js';
import { createTestSystem, type TestSystem } from '../../support/system.js';
import { snapshot } from '../../http/control/agent/telemetry-support.js';

const MINUTE = 60_000;
const DAY = 86_400_000;
const START = Date.parse('2026-11-01T09:00:00Z');
const NODES = ['n1', 'n2'];

/** Node `n`'s snapshot of minute `i`: counters that grow unevenly, a container that comes and goes. */
function body(nodeId: string, i: number): RuntimeSnapshot {
  const s = snapshot(nodeId) as unknown as RuntimeSnapshot;
  s.captured_at = new Date(START + i * MINUTE).toISOString();
  s.interfaces.forEach((x, k) => Object.assign(x, { rx_bytes: 1000 + i * 1700 + ((i * 37 + k) % 11), tx_bytes: 5000 + i * 900 + k }));
  s.wireguard_interfaces[0].peers[0].rx_bytes = 100 + i * 13;
  s.wireguard_interfaces[0].peers[0].latest_handshake_at = new Date(START + Math.floor(i / 2) * 2 * MINUTE).toISOString();
  if (i % 7 === 3) s.containers = s.containers.slice(1);
  return s;
}

/** Everything the views answer for both nodes over the whole time. */
async function views(sys: TestSystem) {
  const pool = sys.pool;
  const grid = { bucket_seconds: 300, points: 40, start: START / 1000 };
  const refs = NODES.flatMap((node_id) => ['dn42_p1', 'dn42_p2'].map((i) => ({ node_id, interface: i })));
  const out: Record<string, unknown> = {
    totals: await interfaceTotals(pool, grid, NODES),
    hourly: await interfaceTotals(pool, { bucket_seconds: 3600, points: 4, start: START / 1000 }, NODES),
    rates: await interfaceRates(pool, grid, refs),
    between: await Promise.all(refs.map((r) => interfaceBytesBetween(pool, r, START / 1000, START / 1000 + 4 * 3600))),
    partly: await Promise.all(refs.map((r) => interfaceBytesBetween(pool, r, START / 1000 + 1800, START / 1000 + 9000))),
  };
  const sort = (rows: unknown[]) => JSON.stringify(rows.map((r) => JSON.stringify(r)).sort());
  for (const key of ['totals', 'hourly', 'rates']) out[key] = sort(out[key] as unknown[]);
  for (const n of NODES) {
    out[`archive ${n}`] = await interfaceArchive(pool, n, new Date(START), new Date(START + 4 * 3_600_000));
    out[`archive part ${n}`] = await interfaceArchive(pool, n, new Date(START + 50 * MINUTE), new Date(START + 140 * MINUTE));
    out[`lean ${n}`] = await leanStatusEvents(pool, n, { limit: 500 });
    out[`lean page ${n}`] = await leanStatusEvents(pool, n, { limit: 7, beforeId: (out[`lean ${n}`] as { id: number }[])[70].id });
    out[`lean report ${n}`] = await leanStatusEvents(pool, n, { kind: 'report', limit: 500 });
    out[`points ${n}`] = await statusPointsSince(pool, n, 'report', new Date(START + 30 * MINUTE));
  }
  return out;
}

/** The body a folded snapshot answers: its own, with the counters of its 5-minute bucket's first snapshot (docs/decisions.md). */
function foldedBody(nodeId: string, i: number): unknown {
  const first = i - ((i + 0) % 5);
  let stored: unknown = body(nodeId, first);
  for (let k = first + 1; k <= i; k++) stored = carryVolatile(stored, body(nodeId, k));
  return stored;
}

describe('Telemetry compaction: closed hours folded into one row per series, every view answering as before', function () {
  this.timeout(120_000);
  let sys: TestSystem;
  const ids = new Map<string, number[]>();

  /** 150 minutes of both nodes, as the ingest writes them: snapshots (status, archive, rollups), WireGuard sums, reports every 5 minutes. */
  async function ingest(minutes: number[]) {
    for (const i of minutes) {
      const at = new Date(START + i * MINUTE);
      for (const n of NODES) {
        const s = body(n, i);
        const id = await insertStatusEvent(sys.pool, n, { kind: 'snapshot', generation: 1, status: 'ok', drift_count: null, payload: s }, at);
        ids.set(n, [...(ids.get(n) ?? []), id]);
        await archiveInterfaceTraffic(sys.pool, s, at);
        await addSnapshotToSeries(sys.pool, s, at);
        await insertWireguardTraffic(
          sys.pool,
          { node_id: n, captured_at: at.toISOString(), peers: [] } as never,
          { rx_bytes: i * 100, tx_bytes: i * 7, peer_count: 1 },
          at,
        );
        if (i % 5 === 2) {
          const payload = { node_id: n, status: i % 10 === 2 ? 'in_sync' : 'drifted', drift_items: [] };
          await insertStatusEvent(
            sys.pool,
            n,
            { kind: 'report', generation: 1, status: payload.status, drift_count: i % 3, payload },
            new Date(at.getTime() + 1000),
          );
        }
      }
    }
  }

  beforeEach(async () => {
    ids.clear();
    sys = await createTestSystem({ projections: [] });
    await ensureTelemetryPartitions(sys.pool, new Date(START - DAY));
  });
  afterEach(async () => sys?.close());

  const count = async (table: string) => Number((await sys.pool.query(`SELECT count(*) AS n FROM ${table}`)).rows[0].n);

  it('keeps every value: the views answer the same before and after, across the folded and the raw part', async () => {
    await ingest([...Array(150).keys()]);
    const before = await views(sys);
    for (const key of ['totals', 'hourly', 'rates']) expect(JSON.parse(before[key] as string), key).to.have.length.greaterThan(1);
    expect(before['archive n1']).to.have.length(30 * 3);
    expect(before['lean page n1']).to.have.length(7);
    expect(before['points n1']).to.have.length(24);
    const snapshotsBefore = await listStatusEvents(sys.pool, 'n1', 'snapshot', 500);

    // At 11:40 the hours 09:00 and 10:00 are closed (10 minutes after their end), 11:00 stays raw.
    const written = await compactTelemetry(sys.pool, new Date(START + 160 * MINUTE));
    expect(written).to.deep.include({ wireguard_traffic_hours: 4, interface_traffic_hours: 4 });
    expect(written.status_snapshot_hours).to.equal(8); // 2 nodes, 2 kinds, 2 hours
    expect(await count(`status_snapshots WHERE created_at < '2026-11-01T11:00:00Z'`)).to.equal(0);
    expect(await count(`status_snapshots`)).to.equal(2 * 30 + 2 * 6);
    expect(await count(`interface_traffic_samples WHERE bucket < '2026-11-01T11:00:00Z'`)).to.equal(0);
    expect(await count(`interface_traffic_rollups WHERE width_s = 300 AND bucket < '2026-11-01T11:00:00Z'`)).to.equal(0);
    expect(await count(`wireguard_traffic_samples WHERE at < '2026-11-01T11:00:00Z'`)).to.equal(0);

    const after = await views(sys);
    expect(after).to.deep.equal(before);

    // Full events: lean fields as stored, bodies as sent except the counters of a folded snapshot, which are its 5-minute bucket's first.
    const snapshotsAfter = await listStatusEvents(sys.pool, 'n1', 'snapshot', 500);
    expect(snapshotsAfter.map(({ payload: _, ...lean }) => lean)).to.deep.equal(snapshotsBefore.map(({ payload: _, ...lean }) => lean));
    const n1 = ids.get('n1')!;
    for (const i of [0, 1, 4, 5, 59, 60, 61, 119, 120, 149]) {
      const expected = i < 120 ? foldedBody('n1', i) : body('n1', i);
      expect((await statusEventById(sys.pool, n1[i]))!.payload, `snapshot ${i}`).to.deep.equal(expected);
      expect(snapshotsAfter.find((e) => e.id === n1[i])!.payload).to.deep.equal(expected);
    }
    expect((await statusEventById(sys.pool, n1[3]))!.payload).to.not.deep.equal(body('n1', 3)); // counters of minute 0
    const { rx_bytes: _rx, ...iface } = (body('n1', 3) as RuntimeSnapshot).interfaces[0];
    expect((await statusEventById(sys.pool, n1[3]))!.payload).to.deep.include({ containers: body('n1', 3).containers, captured_at: body('n1', 3).captured_at });
    expect(((await statusEventById(sys.pool, n1[3]))!.payload as RuntimeSnapshot).interfaces[0]).to.deep.include({
      ...iface,
      tx_bytes: body('n1', 0).interfaces[0].tx_bytes,
    });

    // A second pass at the same time has nothing to fold.
    expect(await compactTelemetry(sys.pool, new Date(START + 160 * MINUTE))).to.deep.equal({
      wireguard_traffic_hours: 0,
      interface_traffic_hours: 0,
      interface_traffic_rollup_periods: 0,
      status_snapshot_hours: 0,
    });
  });

  it('folds a sample that came after its hour was folded into the same row, and the views answer as if it had come in time', async () => {
    const late = 75; // 10:15, sent after 10:00 was folded
    await ingest([...Array(150).keys()].filter((i) => i !== late));
    await compactTelemetry(sys.pool, new Date(START + 160 * MINUTE));
    // The late snapshot's archive row and its WireGuard sum (the series place it at the agent's time).
    const s = body('n1', late);
    await archiveInterfaceTraffic(sys.pool, s, new Date(START + late * MINUTE));
    await insertWireguardTraffic(
      sys.pool,
      { node_id: 'n1', captured_at: s.captured_at, peers: [] } as never,
      { rx_bytes: 1, tx_bytes: 2, peer_count: 1 },
      new Date(START + late * MINUTE),
    );
    const archiveBefore = await interfaceArchive(sys.pool, 'n1', new Date(START), new Date(START + 3 * 3_600_000));
    await compactTelemetry(sys.pool, new Date(START + 160 * MINUTE));
    expect(await count(`interface_traffic_samples WHERE bucket < '2026-11-01T11:00:00Z'`)).to.equal(0);
    expect(await count(`interface_traffic_hours`)).to.equal(4);
    expect(await interfaceArchive(sys.pool, 'n1', new Date(START), new Date(START + 3 * 3_600_000))).to.deep.equal(archiveBefore);
    const { rows } = await sys.pool.query(
      `SELECT count(*)::int AS n FROM wireguard_traffic_hours h, unnest(h.at_us) u WHERE h.node_id = 'n1' AND h.hour = '2026-11-01T10:00:00Z'`,
    );
    expect(rows[0].n).to.equal(60);
  });

  it('loses nothing and duplicates nothing when a pass fails half way: the batch rolls back, the next pass folds it', async () => {
    await ingest([...Array(130).keys()]);
    const before = await views(sys);
    const raw = {
      snapshots: await count('status_snapshots'),
      archive: await count('interface_traffic_samples'),
      rollups: await count('interface_traffic_rollups'),
    };
    // The status fold of n2 fails after n1's rows of the same batch were written; the archive fold fails on n2 likewise.
    await sys.pool.query(`ALTER TABLE status_snapshot_hours ADD CONSTRAINT boom CHECK (node_id <> 'n2')`);
    await sys.pool.query(`ALTER TABLE interface_traffic_hours ADD CONSTRAINT boom CHECK (node_id <> 'n2')`);
    let failure: unknown;
    await compactTelemetry(sys.pool, new Date(START + 160 * MINUTE)).catch((e) => (failure = e));
    expect(String(failure)).to.match(/boom/);
    expect(await count('interface_traffic_hours')).to.equal(0);
    expect(await count('status_snapshot_hours')).to.equal(0);
    expect(await count('interface_traffic_samples')).to.equal(raw.archive);
    expect(await count('status_snapshots')).to.equal(raw.snapshots);
    // WireGuard was folded before the failure (its own transaction), the rollups not yet.
    expect(await count('interface_traffic_rollups')).to.equal(raw.rollups);
    expect(await views(sys)).to.deep.equal(before);

    await sys.pool.query(`ALTER TABLE status_snapshot_hours DROP CONSTRAINT boom`);
    await sys.pool.query(`ALTER TABLE interface_traffic_hours DROP CONSTRAINT boom`);
    await compactTelemetry(sys.pool, new Date(START + 160 * MINUTE));
    expect(await count('status_snapshot_hours')).to.equal(8);
    expect(await views(sys)).to.deep.equal(before);
  });

  it('folds the 4-hour and daily rollups once the day is over, and gives the day’s raw partitions back', async () => {
    await ingest([...Array(80).keys()]);
    const before = await views(sys);
    const written = await compactTelemetry(sys.pool, new Date(Date.parse('2026-11-02T00:10:00Z')));
    expect(written.interface_traffic_rollup_periods).to.equal(2 * 6); // per node: 5 minutes and an hour for 09:00 and 10:00, the 4 hours of 08:00, the day
    expect(await count('interface_traffic_rollups')).to.equal(0);
    expect(await count('status_snapshots')).to.equal(0);
    expect(await views(sys)).to.deep.equal(before);
    const { rows } = await sys.pool.query(
      `SELECT c.relname, pg_relation_size(c.oid)::int AS heap FROM pg_class c
       WHERE c.relname IN ('status_snapshots_p20261101', 'interface_traffic_rollups_p20261101', 'interface_traffic_samples_p20261101', 'wireguard_traffic_samples_p20261101')`,
    );
    expect(rows.map((r) => r.heap)).to.deep.equal([0, 0, 0, 0]);
  });

  it('retention drops the partitions of the folded rows with the rest', async () => {
    await ingest([...Array(130).keys()]);
    await compactTelemetry(sys.pool, new Date(START + 160 * MINUTE));
    for (const t of ['status_snapshot_hours', 'interface_traffic_hours', 'interface_traffic_rollup_periods', 'wireguard_traffic_hours'])
      expect(await count(`${t}_p20261101`), t).to.be.greaterThan(0);
    const deleted = await pruneTelemetry(sys.pool, new Date(START + (RETENTION_DAYS + 1) * DAY));
    expect(deleted.status_snapshot_hours).to.equal(8);
    expect(deleted.interface_traffic_hours).to.equal(4);
    const { rows } = await sys.pool.query(
      `SELECT to_regclass('status_snapshot_hours_p20261101') AS s, to_regclass('interface_traffic_rollup_periods_p20261101') AS r`,
    );
    expect(rows[0]).to.deep.equal({ s: null, r: null });
    for (const t of ['status_snapshot_hours', 'interface_traffic_hours', 'interface_traffic_rollup_periods', 'wireguard_traffic_hours'])
      expect(await count(t), t).to.equal(0);
  });
});
