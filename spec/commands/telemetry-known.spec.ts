import { expect } from 'chai';
import type pg from 'pg';
import { recordApply, recordPrefixFlaps, recordSnapshot, type TelemetryDeps } from '../../commands/telemetry.js';
import { nodeStatusStream } from '../../domain/telemetry/health.js';
import type { ApplyResult, PrefixFlaps, RuntimeSnapshot } from '../../domain/telemetry/reports.js';
import { applyResult, snapshot } from '../http/control/agent/telemetry-support.js';
import { createTestSystem, type TestSystem } from '../support/system.js';

const meta = { actor: 'spec' };
const T0 = Date.parse('2026-11-01T12:00:00Z');
const MIN = 60_000;

/**
 * Reports written on what this process wrote last (issue 30: one statement each)
 * store what the transaction stores. Node `k` reports through one process's deps
 * (its caches), node `f` through fresh deps each time (always the transaction),
 * node `x` through two processes in turn; their rows must be the same.
 */
describe('telemetry reports on what this process wrote last (one statement)', function () {
  this.timeout(60_000);
  let sys: TestSystem;
  /** Statements and transactions each deps sent. */
  let sent: { statements: number; transactions: number };

  const counting = (pool: pg.Pool): pg.Pool =>
    new Proxy(pool, {
      get(target, prop) {
        if (prop === 'query') return (...args: unknown[]) => ((sent.statements += 1), (target.query as (...a: unknown[]) => unknown)(...args));
        if (prop === 'connect') return () => ((sent.transactions += 1), target.connect());
        const value = Reflect.get(target, prop, target);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
  const deps = (): TelemetryDeps => ({ pool: counting(sys.pool), store: sys.store, log: sys.log, background: sys.context.background });

  before(async () => {
    sys = await createTestSystem();
  });
  after(async () => sys?.close());
  beforeEach(() => {
    sent = { statements: 0, transactions: 0 };
  });

  /** A node's rows of `table` in a stable order, without the node id and the columns named. */
  async function rowsOf(table: string, nodeId: string, order: string, without: string[] = []): Promise<Record<string, unknown>[]> {
    const { rows } = await sys.pool.query(`SELECT * FROM ${table} WHERE node_id = $1 ORDER BY ${order}`, [nodeId]);
    return rows.map((r) => Object.fromEntries(Object.entries(r).filter(([k]) => k !== 'node_id' && !without.includes(k))));
  }

  const flapReport = (nodeId: string, i: number): PrefixFlaps =>
    ({
      node_id: nodeId,
      captured_at: new Date(T0 + i * MIN).toISOString(),
      feed_state: 'established',
      total_changes: 10 * i,
      entries: [
        { prefix: '172.21.0.0/24', peer_asn: 4242420001, origin_asn: 4242420002, score: 10 + 15 * i, flaps: 10 * i, as_path: [4242420001, 4242420002] },
        { prefix: '172.21.1.0/24', peer_asn: null, origin_asn: 4242420003, score: 3, flaps: i, announcements: i, withdrawals: 1 },
        ...(i % 2 === 0 ? [{ prefix: 'fd42::/48', peer_asn: 4242420001, origin_asn: null, score: 25, flaps: 2 }] : []),
      ],
    }) as PrefixFlaps;

  async function flapRows(nodeId: string) {
    return {
      rows: await rowsOf('prefix_flaps', nodeId, 'prefix, peer_asn'),
      feed: await rowsOf('prefix_flap_feeds', nodeId, 'node_id', ['received_at']),
    };
  }

  it('stores a prefix flap report in one statement after the node’s previous one, the rows the transaction stores', async () => {
    const k = deps();
    for (let i = 0; i < 4; i++) {
      sys.clock.current = new Date(T0 + i * MIN + 1000);
      sent = { statements: 0, transactions: 0 };
      await recordPrefixFlaps(k, flapReport('k', i), sys.clock.now());
      // The first report of the node goes the long way; each later one is one statement, no transaction.
      expect(sent).to.deep.equal(i === 0 ? { statements: 0, transactions: 1 } : { statements: 1, transactions: 0 });
      await recordPrefixFlaps(deps(), flapReport('f', i), sys.clock.now());
    }
    expect(await flapRows('k')).to.deep.equal(await flapRows('f'));
  });

  it('writes on the stored report when another process wrote it since: the rows the transaction stores', async () => {
    const [a, b] = [deps(), deps()];
    for (let i = 0; i < 5; i++) {
      sys.clock.current = new Date(T0 + 10 * MIN + i * MIN);
      sent = { statements: 0, transactions: 0 };
      await recordPrefixFlaps(i === 2 ? b : a, flapReport('x', i), sys.clock.now());
      // After B's report, A's first statement writes nothing and answers the stored report; the second writes on it.
      if (i === 3) expect(sent).to.deep.equal({ statements: 2, transactions: 0 });
      await recordPrefixFlaps(deps(), flapReport('y', i), sys.clock.now());
      expect(await flapRows('x')).to.deep.equal(await flapRows('y'));
    }
  });

  /** A snapshot of minute `i`: counters growing, one session down in minute 2. */
  const snapshotAt = (nodeId: string, i: number): RuntimeSnapshot => {
    const s = snapshot(
      nodeId,
      { p1: 'established', p2: i === 2 ? 'active' : 'established' },
      { captured_at: new Date(T0 + i * MIN).toISOString() },
    ) as RuntimeSnapshot;
    s.interfaces = s.interfaces.map((it) => ({ ...it, rx_bytes: it.rx_bytes + 1000 * i, tx_bytes: it.tx_bytes + 3000 * i }));
    s.self_metrics = { ...s.self_metrics, cpu: 1 + i };
    s.bgp_protocols = s.bgp_protocols.map((p) => ({ ...p, routes_imported_v4: 10 + i }));
    return s;
  };

  async function snapshotRows(nodeId: string) {
    return {
      status: await rowsOf('node_status', nodeId, 'node_id'),
      history: await rowsOf('status_snapshots', nodeId, 'created_at', ['id']),
      cursor: await rowsOf('series_cursors', nodeId, 'node_id'),
      counters: await rowsOf('interface_counters_latest', nodeId, 'interface'),
      interfaces: await rowsOf('interface_traffic_rollups', nodeId, 'width_s, bucket, interface'),
      node: await rowsOf('node_series_rollups', nodeId, 'width_s, bucket'),
      // The archives, which ride on the series share's statement.
      samples: await rowsOf('interface_traffic_samples', nodeId, 'interface, bucket'),
      metrics: await rowsOf('self_metrics_samples', nodeId, 'at'),
      routeCounts: await rowsOf('session_route_counts', nodeId, 'session, bucket'),
    };
  }

  /** The rows as JSON text with node `from` named `to` (node ids are in the bodies too). */
  const renamed = (rows: unknown, from: string, to: string): string => JSON.stringify(rows).replaceAll(`"${from}"`, `"${to}"`);
  const transitions = async (nodeId: string) => (await sys.store.readStream(nodeStatusStream(nodeId))).map((e) => [e.type, e.data]);

  it('stores a snapshot and its series share in one statement each after the node’s previous one, the rows the transactions store', async () => {
    const k = deps();
    for (let i = 0; i < 6; i++) {
      sys.clock.current = new Date(T0 + i * MIN + 500);
      sent = { statements: 0, transactions: 0 };
      await recordSnapshot(k, snapshotAt('k', i), meta, sys.clock.now());
      await sys.context.background.drain();
      // From the second snapshot on: one statement for the answer's write and one for the series share with the
      // archives, no transaction; a snapshot that records a transition (p2 down in minute 2, up in minute 3) reads the
      // recorded state once more to decide it.
      const expected = { statements: i === 2 || i === 3 ? 3 : 2, transactions: 0 };
      if (i > 0) expect(sent).to.deep.equal(expected);
      await recordSnapshot(deps(), snapshotAt('f', i), meta, sys.clock.now());
      await sys.context.background.drain();
    }
    expect(renamed(await snapshotRows('k'), 'k', 'f')).to.equal(JSON.stringify(await snapshotRows('f')));
  });

  it('writes a snapshot on the stored row after an apply result changed it, and after another process’s snapshot: the rows the transactions store', async () => {
    const [a, b] = [deps(), deps()];
    for (let i = 0; i < 6; i++) {
      sys.clock.current = new Date(T0 + 20 * MIN + i * MIN);
      const now = sys.clock.now();
      // The other process's snapshot finds p1 restarted (a later `since`), which the next one must not find again.
      const since = i >= 3 ? '2026-11-01T12:22:30Z' : '2026-11-01T10:00:00Z';
      const s = (node: string) => ({ ...snapshotAt(node, 20 + i), bgp_protocols: snapshotAt(node, 0).bgp_protocols.map((p) => ({ ...p, since })) });
      sent = { statements: 0, transactions: 0 };
      await recordSnapshot(i === 3 ? b : a, s('x'), meta, now);
      await sys.context.background.drain();
      // After B's snapshot, A's answer and series share take two statements each (the first answers what B stored); the
      // archives ride on the share's first.
      if (i === 4) expect(sent).to.deep.equal({ statements: 4, transactions: 0 });
      await recordSnapshot(deps(), s('y'), meta, now);
      if (i === 1) {
        await recordApply(a, applyResult('x', 'failed') as ApplyResult, meta, now);
        await recordApply(deps(), applyResult('y', 'failed') as ApplyResult, meta, now);
      }
      await sys.context.background.drain();
      expect(renamed(await snapshotRows('x'), 'x', 'y')).to.equal(JSON.stringify(await snapshotRows('y')));
      expect(renamed(await transitions('x'), 'x', 'y')).to.equal(JSON.stringify(await transitions('y')));
    }
  });
});
