import { ROLLUP_WIDTHS } from '../../../../domain/series/grid.js';
import { expect } from 'chai';
import { nodeStatusStream } from '../../../../domain/telemetry/health.js';
import { REPORT_BODY_LIMITS, ROUTING_TABLE_BODY_LIMIT_BYTES } from '../../../../http/control/agent/reports.js';
import { latestWireguardTraffic, prefixFlapsOf } from '../../../../infra/telemetry/store.js';
import { expectResponse } from '../../../support/http.js';
import { anonymous, applyResult, reconciliation, snapshot, startAgents, type AgentHarness } from './telemetry-support.js';

const KEY = 'cQzQn6qN5m0y0VZ8mY0aQkqf1mN0s2m0oQv0a8m0aE0=';

/** One valid body per report endpoint, and the exact response it earns. */
const REPORTS: { path: string; body: (n: string) => Record<string, unknown>; response: (n: string) => Record<string, unknown> }[] = [
  { path: '/agent/runtime-snapshot', body: (n) => snapshot(n), response: (n) => ({ accepted: true, node_id: n, generation: 1, containers: 2, interfaces: 3 }) },
  {
    path: '/agent/routing-table',
    body: (n) => ({
      node_id: n,
      captured_at: '2026-11-01T12:00:00Z',
      rpki_observed: true,
      routes: [
        { prefix: '172.20.0.0/24', protocol: 'p1', origin_asn: 4242420002, as_path: [4242420002], rpki: 'valid', local: false },
        { prefix: 'fd42:1::/48', protocol: 'p1', origin_asn: 4242420003, as_path: [4242420002, 4242420003], rpki: 'not_found', local: false },
        { prefix: '172.20.1.0/24', protocol: 'static1', origin_asn: null, as_path: [], rpki: null, local: true },
      ],
    }),
    response: (n) => ({ accepted: true, node_id: n, observation: 1, routes: 3 }),
  },
  {
    path: '/agent/prefix-flaps',
    body: (n) => ({
      node_id: n,
      captured_at: '2026-11-01T12:00:00Z',
      feed_state: 'established',
      entries: [
        { prefix: '172.20.0.0/24', peer_asn: 4242420002, origin_asn: 4242420002, score: 42.5 },
        { prefix: '172.20.0.0/24', peer_asn: 4242420009, origin_asn: 4242420002, score: 3, flaps: 3, last_flap_at: '2026-11-01T11:58:00Z' },
      ],
    }),
    response: (n) => ({ accepted: true, node_id: n, entries: 2, feed_state: 'established' }),
  },
  {
    path: '/agent/wireguard-traffic',
    body: (n) => ({
      node_id: n,
      captured_at: '2026-11-01T12:00:00Z',
      peers: [
        { interface: 'dn42_p1', public_key: KEY, rx_bytes: 100, tx_bytes: 200 },
        { interface: 'dn42_p2', rx_bytes: 1, tx_bytes: 2 },
      ],
    }),
    response: (n) => ({ accepted: true, node_id: n, rx_bytes: 101, tx_bytes: 202, peer_count: 2 }),
  },
  {
    path: '/agent/wireguard-reresolve',
    body: (n) => ({
      node_id: n,
      checked_at: '2026-11-01T12:00:00Z',
      interfaces: [
        { interface: 'dn42_p1', endpoint: 'peer.example.net:51820', previous_address: '192.0.2.1', address: '192.0.2.7', reresolved: true, error: null },
        { interface: 'dn42_p2', endpoint: 'other.example.net:51820', previous_address: '192.0.2.2', address: '192.0.2.2', reresolved: false, error: null },
      ],
    }),
    response: (n) => ({ accepted: true, node_id: n, checked: 2, reresolved: 1 }),
  },
  { path: '/agent/reconciliation-report', body: (n) => reconciliation(n), response: (n) => ({ accepted: true, node_id: n, status: 'drift', drift_items: 2 }) },
  { path: '/agent/apply-result', body: (n) => applyResult(n), response: (n) => ({ accepted: true, node_id: n, generation: 1, status: 'succeeded' }) },
];

/** The `REPORT_BODY_LIMITS` key of a report path. */
function reportKey(path: string): keyof typeof REPORT_BODY_LIMITS {
  const keys: Record<string, keyof typeof REPORT_BODY_LIMITS> = {
    '/agent/runtime-snapshot': 'snapshot',
    '/agent/routing-table': 'routing',
    '/agent/prefix-flaps': 'flaps',
    '/agent/wireguard-traffic': 'traffic',
    '/agent/wireguard-reresolve': 'reresolve',
    '/agent/reconciliation-report': 'report',
    '/agent/apply-result': 'apply',
  };
  return keys[path];
}

describe('Agent reports over HTTP', function () {
  this.timeout(30_000);
  let h: AgentHarness;

  before(async () => {
    h = await startAgents(['n1', 'n2', 'n3', 'n4']);
  });
  after(async () => h?.close());

  it('answers every report exactly as the contract lists', async () => {
    for (const r of REPORTS) {
      const res = await h.agent.n1.post(r.path, r.body('n1'));
      expectResponse(res).status(200);
      expect(res.body, r.path).to.deep.equal(r.response('n1'));
    }
    await h.sys.context.background.drain();
  });

  it('refuses a body whose node_id is not the token node (403) and a request without token (401)', async () => {
    for (const r of REPORTS) {
      expectResponse(await h.agent.n2.post(r.path, r.body('n1')))
        .status(403)
        .detail('agent token is not bound to node n1');
      expectResponse(await anonymous(h).post(r.path, r.body('n1'))).status(401);
    }
  });

  it("checks the body's node against the token before validating the rest (403 before 422)", async () => {
    for (const r of REPORTS) {
      const unknownKeys = Object.fromEntries(Array.from({ length: 500 }, (_, i) => [`unknown_${i}`, i]));
      expectResponse(await h.agent.n2.post(r.path, { node_id: 'n1', ...unknownKeys }))
        .status(403)
        .detail('agent token is not bound to node n1');
    }
  });

  it('validates the bodies strictly (422): missing node_id, unknown fields, bad values', async () => {
    expectResponse(await h.agent.n1.post('/agent/apply-result', { ...applyResult('n1'), node_id: undefined })).status(422);
    expectResponse(await h.agent.n1.post('/agent/apply-result', { ...applyResult('n1'), surprise: true })).status(422);
    expectResponse(await h.agent.n1.post('/agent/apply-result', applyResult('n1', 'maybe'))).status(422);
    expectResponse(await h.agent.n1.post('/agent/runtime-snapshot', snapshot('n1', { p1: 'sideways' }))).status(422);
    expectResponse(
      await h.agent.n1.post('/agent/wireguard-traffic', {
        node_id: 'n1',
        captured_at: '2026-11-01T12:00:00Z',
        peers: [{ interface: 'x', rx_bytes: -1, tx_bytes: 0 }],
      }),
    ).status(422);
  });

  it('publishes the report bodies in the OpenAPI document', async () => {
    const doc = (await anonymous(h).get('/openapi.json')).body;
    for (const r of REPORTS) {
      const schema = doc.paths[`/control/v1${r.path}`].post.requestBody.content['application/json'].schema;
      expect(schema.required, r.path).to.include('node_id');
      expect(schema.additionalProperties, r.path).to.equal(false);
    }
    expect(doc.paths['/control/v1/agent/wireguard-keys'].post.requestBody.content['application/json'].schema.required).to.deep.equal(['node_id', 'public_key']);
  });

  it('keeps the traffic sums of every sample and the per-peer breakdown of the latest two', async () => {
    // Samples are placed at their captured_at (the clock's time here, as an agent in step would send).
    const sample = (
      rx: number,
      peers = [
        { interface: 'dn42_a', public_key: KEY, rx_bytes: rx, tx_bytes: 2 * rx },
        { interface: 'dn42_b', rx_bytes: 10, tx_bytes: 20 },
      ],
    ) => ({ node_id: 'n2', captured_at: h.sys.clock.now().toISOString(), peers });
    expect(await latestWireguardTraffic(h.sys.pool, 'n2')).to.equal(undefined);
    for (const rx of [100, 400, 1000]) {
      expectResponse(await h.agent.n2.post('/agent/wireguard-traffic', sample(rx))).status(200);
      h.sys.clock.advance(30_000);
    }
    const { rows } = await h.sys.pool.query(
      `SELECT rx_bytes::int AS rx, tx_bytes::int AS tx, peer_count FROM wireguard_traffic_samples WHERE node_id = 'n2' ORDER BY at`,
    );
    expect(rows).to.deep.equal([
      { rx: 110, tx: 220, peer_count: 2 },
      { rx: 410, tx: 820, peer_count: 2 },
      { rx: 1010, tx: 2020, peer_count: 2 },
    ]);
    const latest = await latestWireguardTraffic(h.sys.pool, 'n2');
    expect(latest?.latest.peers).to.deep.equal(sample(1000).peers);
    expect(latest?.previous?.peers).to.deep.equal(sample(400).peers);
    expect(Date.parse(latest!.latest.at) - Date.parse(latest!.previous!.at)).to.equal(30_000);
  });

  it('replaces the prefix flap table with each report', async () => {
    const flaps = REPORTS.find((r) => r.path === '/agent/prefix-flaps')!;
    await h.agent.n1.post('/agent/prefix-flaps', flaps.body('n1'));
    const second = {
      node_id: 'n1',
      captured_at: '2026-11-01T12:01:00Z',
      feed_state: 'down',
      entries: [{ prefix: '10.0.0.0/8', peer_asn: 4242420005, origin_asn: null, score: 1 }],
    };
    expect((await h.agent.n1.post('/agent/prefix-flaps', second)).body).to.deep.equal({ accepted: true, node_id: 'n1', entries: 1, feed_state: 'down' });
    const { rows } = await h.sys.pool.query(`SELECT prefix, peer_asn::text FROM prefix_flaps WHERE node_id = 'n1'`);
    expect(rows).to.deep.equal([{ prefix: '10.0.0.0/8', peer_asn: '4242420005' }]);
    const feed = await h.sys.pool.query(`SELECT feed_state, entries FROM prefix_flap_feeds WHERE node_id = 'n1'`);
    expect(feed.rows).to.deep.equal([{ feed_state: 'down', entries: 1 }]);
  });

  it("accepts a full routing table of 20,000 realistic routes (above every other report's body limit)", async () => {
    const routes = Array.from({ length: 20000 }, (_, i) => {
      const origin = 4242420000 + (i % 3000);
      return {
        prefix: i % 2 ? `172.${20 + (i >> 13)}.${(i >> 5) & 255}.${(i & 31) * 8}/29` : `fd42:${(i >> 4).toString(16)}:${(i & 15).toString(16)}00::/48`,
        protocol: `ebgp_as424242${String(i % 100).padStart(4, '0')}`,
        origin_asn: origin,
        as_path: [4242420002, 4242421080, 4242423914, origin],
        rpki: i % 3 === 0 ? 'valid' : 'not_found',
        local: false,
      };
    });
    const body = { node_id: 'n1', captured_at: '2026-11-01T12:05:00Z', rpki_observed: true, routes };
    const bytes = Buffer.byteLength(JSON.stringify(body));
    expect(bytes).to.be.above(2 * 1024 * 1024);
    const res = await h.agent.n1.post('/agent/routing-table', body);
    expectResponse(res).status(200);
    expect(res.body).to.include({ accepted: true, node_id: 'n1', routes: 20000 });
    // Other reports have smaller limits.
    expectResponse(await h.agent.n1.post('/agent/prefix-flaps', { node_id: 'n1', pad: 'x'.repeat(bytes) })).status(413);
  });

  it('refuses a routing-table body above its own limit (413) and parses none without a valid agent token', async () => {
    const huge = { node_id: 'n1', captured_at: '2026-11-01T12:05:00Z', rpki_observed: true, routes: [], pad: 'x'.repeat(ROUTING_TABLE_BODY_LIMIT_BYTES) };
    expectResponse(await h.agent.n1.post('/agent/routing-table', huge)).status(413);
    expect((await anonymous(h).post('/agent/routing-table', { ...huge, pad: 'x'.repeat(3 * 1024 * 1024) })).status).to.equal(401);
  });

  it('parses each report body at its own limit and refuses one byte more with 413', async function () {
    this.timeout(120_000);
    const padded = (bytes: number) => JSON.stringify({ pad: 'x'.repeat(bytes - JSON.stringify({ pad: '' }).length) });
    for (const r of REPORTS) {
      const limit = REPORT_BODY_LIMITS[reportKey(r.path)];
      const at = await h.agent.n1.post(r.path, padded(limit));
      expect(at.status, `${r.path} at ${limit}: ${at.text.slice(0, 200)}`).to.equal(422);
      expectResponse(await h.agent.n1.post(r.path, padded(limit + 1)))
        .status(413)
        .detail('request body too large');
    }
  });

  it('accepts reports filled to their schema caps with the longest strings (the limits are derived from them)', async function () {
    this.timeout(120_000);
    const name = (i: number) => `${i}_`.padEnd(128, 'n');
    const time = '2026-11-01T12:00:00.000Z';
    const text = 'e'.repeat(2000);
    const full: Record<string, Record<string, unknown>> = {
      '/agent/runtime-snapshot': snapshot(
        'n4',
        {},
        {
          containers: Array.from({ length: 256 }, (_, i) => ({ name: name(i), state: 'running', image: 'i'.repeat(512), health: 'h'.repeat(32) })),
          interfaces: Array.from({ length: 1024 }, (_, i) => ({ name: name(i), up: true, mtu: 1420, rx_bytes: 2 ** 52, tx_bytes: 2 ** 52 })),
          // 64 × 64 = 4,096 peers, as many as a node's WireGuard traffic sample carries.
          wireguard_interfaces: Array.from({ length: 64 }, (_, i) => ({
            name: name(i),
            public_key: KEY,
            listen_port: 51800 + i,
            peers: Array.from({ length: 64 }, () => ({
              public_key: KEY,
              endpoint: 'p'.repeat(256),
              latest_handshake_at: time,
              rx_bytes: 2 ** 52,
              tx_bytes: 2 ** 52,
            })),
          })),
          bgp_protocols: Array.from({ length: 2048 }, (_, i) => ({
            name: name(i),
            state: 'established',
            since: time,
            remote_asn: 4294967295,
            routes_imported: 2147483647,
            routes_exported: 2147483647,
            info: 'i'.repeat(256),
          })),
        },
      ),
      // Counters of 1 TiB: the sample's sums are bigint columns, and 4,096 counters near 2^53 would overflow them.
      '/agent/wireguard-traffic': {
        node_id: 'n4',
        captured_at: time,
        peers: Array.from({ length: 4096 }, (_, i) => ({
          interface: name(i),
          public_key: KEY,
          rx_bytes: 2 ** 40 + 123_456_789,
          tx_bytes: 2 ** 40 + 987_654_321,
        })),
      },
      '/agent/wireguard-reresolve': {
        node_id: 'n4',
        checked_at: time,
        interfaces: Array.from({ length: 1024 }, (_, i) => ({
          interface: name(i),
          endpoint: 'p'.repeat(256),
          previous_address: 'a'.repeat(64),
          address: 'b'.repeat(64),
          reresolved: false,
          error: text,
        })),
      },
      '/agent/reconciliation-report': {
        ...reconciliation('n4'),
        drift_items: Array.from({ length: 1000 }, (_, i) => ({ kind: name(i), name: name(i), detail: text })),
        error: text,
      },
      '/agent/apply-result': {
        ...applyResult('n4', 'failed'),
        error: text,
        steps: Array.from({ length: 200 }, (_, i) => ({ name: name(i), status: 'failed', detail: text })),
      },
      '/agent/prefix-flaps': {
        node_id: 'n4',
        captured_at: time,
        feed_state: 'established',
        total_changes: 2147483647,
        entries: Array.from({ length: 1000 }, (_, i) => ({
          prefix: `fd42:${i.toString(16)}:ffff:ffff:ffff:ffff:ffff:ffff/128`,
          peer_asn: 4294967295,
          origin_asn: 4294967295,
          score: 1e15 + i / 7,
          flaps: 2147483647,
          last_flap_at: time,
          as_path: Array.from({ length: 64 }, () => 4294967295),
          announcements: 2147483647,
          withdrawals: 2147483647,
        })),
      },
    };
    for (const [path, body] of Object.entries(full)) {
      const bytes = Buffer.byteLength(JSON.stringify(body));
      expect(bytes, path).to.be.below(REPORT_BODY_LIMITS[reportKey(path)]);
      const res = await h.agent.n4.post(path, body);
      expect(res.status, `${path} (${bytes} bytes): ${res.text.slice(0, 300)}`).to.equal(200);
    }
    await h.sys.context.background.drain();
  });

  it('refuses a traffic sample whose sums pass 2^53 (422, not a database error)', async () => {
    const peers = Array.from({ length: 4 }, (_, i) => ({ interface: `wg${i}`, rx_bytes: 2 ** 52, tx_bytes: 1 }));
    const res = await h.agent.n4.post('/agent/wireguard-traffic', { node_id: 'n4', captured_at: '2026-11-01T12:30:00Z', peers });
    expectResponse(res).status(422).detail('traffic sums out of range');
    expect(res.body.detail.errors).to.deep.equal([
      { loc: ['body', 'peers'], msg: `the sum of rx_bytes or tx_bytes over the peers exceeds ${Number.MAX_SAFE_INTEGER}`, type: 'number_range' },
    ]);
  });

  it('accepts peer_asn null (own origin or no attribution), one row per prefix with it', async () => {
    const body = {
      node_id: 'n1',
      captured_at: '2026-11-01T12:02:00Z',
      feed_state: 'established',
      entries: [
        { prefix: '172.20.1.0/24', peer_asn: null, origin_asn: 4242420001, score: 2 },
        { prefix: '172.20.1.0/24', peer_asn: null, origin_asn: 4242420001, score: 7 },
        { prefix: '172.20.1.0/24', peer_asn: 4242420002, origin_asn: 4242420001, score: 1 },
      ],
    };
    expect((await h.agent.n1.post('/agent/prefix-flaps', body)).body).to.deep.equal({ accepted: true, node_id: 'n1', entries: 2, feed_state: 'established' });
    const { rows } = await h.sys.pool.query(`SELECT peer_asn::text, score FROM prefix_flaps WHERE node_id = 'n1' ORDER BY score DESC`);
    expect(rows).to.deep.equal([
      { peer_asn: null, score: 7 },
      { peer_asn: '4242420002', score: 1 },
    ]);
    expect((await prefixFlapsOf(h.sys.pool, 'n1')).map((r) => r.peer_asn)).to.deep.equal([null, 4242420002]);
    const unique = h.sys.pool.query(`INSERT INTO prefix_flaps (node_id, prefix, peer_asn, score, captured_at) VALUES ('n1', '172.20.1.0/24', NULL, 1, now())`);
    await unique.then(
      () => expect.fail('a second null-attributed row of the same prefix was stored'),
      (err) => expect(err.code).to.equal('23505'),
    );
  });

  it('answers the runtime snapshot once the health write commits, before the archives run', async () => {
    // Hold a lock the self-metrics archive needs: the response must not wait for it.
    const blocker = await h.sys.pool.connect();
    try {
      await blocker.query('BEGIN');
      await blocker.query('LOCK TABLE self_metrics_samples IN ACCESS EXCLUSIVE MODE');
      const res = await h.agent.n3.post('/agent/runtime-snapshot', snapshot('n3'));
      expect(res.body).to.deep.equal({ accepted: true, node_id: 'n3', generation: 1, containers: 2, interfaces: 3 });
      // The health write is there already: status row, the transition events (health and
      // sessions, one append) and the read model they wrote.
      expect((await h.sys.pool.query(`SELECT bgp_established FROM node_status WHERE node_id = 'n3'`)).rows).to.deep.equal([{ bgp_established: 2 }]);
      expect((await h.sys.store.readStream(nodeStatusStream('n3'))).map((e) => e.type)).to.deep.equal([
        'NodeHealthChanged',
        'BgpSessionStateChanged',
        'BgpSessionStateChanged',
      ]);
      expect((await h.sys.pool.query(`SELECT health FROM node_status_current WHERE node_id = 'n3'`)).rows).to.deep.equal([{ health: 'ok' }]);
      expect(h.sys.context.background.size).to.be.greaterThan(0);
    } finally {
      await blocker.query('COMMIT');
      blocker.release();
    }
    await h.sys.context.background.drain();
    expect((await h.sys.pool.query(`SELECT count(*)::int AS n FROM self_metrics_samples WHERE node_id = 'n3'`)).rows[0].n).to.equal(1);
    expect(
      (await h.sys.pool.query(`SELECT interface FROM interface_traffic_samples WHERE node_id = 'n3' ORDER BY interface`)).rows.map((r) => r.interface),
    ).to.deep.equal(['dn42_p1', 'dn42_p2', 'eth0']);
  });

  it('only logs a failing archive: the snapshot is still accepted, and its series share still written', async () => {
    const samples = async () =>
      (await h.sys.pool.query(`SELECT coalesce(sum(metric_samples), 0)::int AS n FROM node_series_rollups WHERE node_id = 'n3'`)).rows[0].n as number;
    const before = await samples();
    await h.sys.pool.query('ALTER TABLE self_metrics_samples RENAME TO self_metrics_samples_away');
    try {
      const res = await h.agent.n3.post('/agent/runtime-snapshot', snapshot('n3', undefined, { captured_at: '2026-11-01T12:05:00Z' }));
      expectResponse(res).status(200);
      await h.sys.context.background.drain();
    } finally {
      await h.sys.pool.query('ALTER TABLE self_metrics_samples_away RENAME TO self_metrics_samples');
    }
    // The archives usually ride on the share's statement: that one failed, so the share went again on its own.
    expect((await samples()) - before).to.equal(ROLLUP_WIDTHS.length);
    h.sys.clock.advance(1000);
  });

  it('records health transitions and BGP session state changes as events of node-status-<id>', async () => {
    const types = async () => (await h.sys.store.readStream(nodeStatusStream('n2'))).map((e) => [e.type, e.data]);
    await h.agent.n2.post('/agent/runtime-snapshot', snapshot('n2'));
    await h.sys.context.background.drain();
    h.sys.clock.advance(30_000);
    await h.agent.n2.post('/agent/runtime-snapshot', snapshot('n2', { p1: 'established', p2: 'active' }));
    await h.sys.context.background.drain();
    h.sys.clock.advance(30_000);
    // Same picture again: no new transitions.
    await h.agent.n2.post('/agent/runtime-snapshot', snapshot('n2', { p1: 'established', p2: 'active' }));
    await h.sys.context.background.drain();
    h.sys.clock.advance(30_000);
    await h.agent.n2.post('/agent/runtime-snapshot', snapshot('n2', { p1: 'idle', p2: 'active' }));
    await h.sys.context.background.drain();

    const C = '2026-11-01T12:00:00.000Z'; // the snapshots' captured_at
    expect(await types()).to.deep.equal([
      ['NodeHealthChanged', { node_id: 'n2', from: 'unknown', to: 'ok', reasons: [] }],
      ['BgpSessionStateChanged', { node_id: 'n2', session: 'p1', from: 'unknown', to: 'established', captured_at: C }],
      ['BgpSessionStateChanged', { node_id: 'n2', session: 'p2', from: 'unknown', to: 'established', captured_at: C }],
      ['NodeHealthChanged', { node_id: 'n2', from: 'ok', to: 'degraded', reasons: ['1 of 2 bgp sessions not established'] }],
      ['BgpSessionStateChanged', { node_id: 'n2', session: 'p2', from: 'established', to: 'active', captured_at: C }],
      ['NodeHealthChanged', { node_id: 'n2', from: 'degraded', to: 'down', reasons: ['none of 2 bgp sessions established'] }],
      ['BgpSessionStateChanged', { node_id: 'n2', session: 'p1', from: 'established', to: 'idle', captured_at: C }],
    ]);
  });

  it('lets a failed apply degrade the node and a later success restore it', async () => {
    await h.agent.n1.post('/agent/runtime-snapshot', snapshot('n1'));
    await h.agent.n1.post('/agent/reconciliation-report', reconciliation('n1', 'in_sync'));
    await h.agent.n1.post('/agent/apply-result', applyResult('n1', 'failed', 2));
    await h.agent.n1.post('/agent/apply-result', applyResult('n1', 'succeeded', 2));
    await h.sys.context.background.drain();
    const health = (await h.sys.store.readStream(nodeStatusStream('n1')))
      .filter((e) => e.type === 'NodeHealthChanged')
      .map((e) => (e.data as { to: string }).to);
    expect(health.slice(-2)).to.deep.equal(['degraded', 'ok']);
  });
});
