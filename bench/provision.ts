// (d) Peering provision on a busy node: `POST /nodes/{id}/peerings/provision`
// (a peering, its WireGuard interface and a BGP session, materialised and
// published as a new generation) on a node that already has 200 peerings, over
// real HTTP. Baseline in the same run: a bare Express route that inserts the same
// three rows into plain tables in one transaction.
import express from 'express';
import type pg from 'pg';
import { createControlApp } from '../http/control/app.js';
import { createTestSystem, startApp } from '../spec/support/system.js';
import { envInt, MemorySampler, now, percentile, progress, ratio, report, round, type Benchmark } from './support.js';

const TOKEN = 'bench-admin-token-0123456789abcdef';

const spec = (n: number) => ({
  peering: { name: `peer${n}`, remote_asn: 4242420000 + n },
  interface_spec: {
    name: `dn42_${n}`,
    listen_port: 20000 + n,
    peer: { public_key: 'wQzQn6qN5m0y0VZ8mY0aQkqf1mN0s2m0oQv0a8m0aE0=', endpoint: `peer${n}.example.net:51820` },
    peer_link_local: 'fe80::2',
  },
  bgp_spec: { name: `dn42_${n}`, remote_asn: 4242420000 + n, neighbor_address: 'fe80::2', interface: `dn42_${n}` },
});

async function post(url: string, body: unknown): Promise<number> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` },
    body: JSON.stringify(body),
  });
  await res.arrayBuffer();
  if (res.status !== 201) throw new Error(`provision answered ${res.status}`);
  return res.status;
}

interface Timing {
  p50: number;
  p95: number;
  perSecond: number;
}

async function timeSequential(count: number, one: (i: number) => Promise<unknown>): Promise<Timing> {
  const latencies: number[] = [];
  const start = now();
  for (let i = 0; i < count; i++) {
    const t0 = now();
    await one(i);
    latencies.push(now() - t0);
  }
  const seconds = (now() - start) / 1000;
  latencies.sort((a, b) => a - b);
  return { p50: percentile(latencies, 50), p95: percentile(latencies, 95), perSecond: count / seconds };
}

/** The baseline: the same three rows, one transaction, no events, no materialisation. */
async function bareExpress(pool: pg.Pool) {
  await pool.query(`CREATE TABLE bench_peerings (id serial PRIMARY KEY, node_id text, name text, remote_asn bigint, UNIQUE (node_id, name));
    CREATE TABLE bench_interfaces (id serial PRIMARY KEY, node_id text, peering_id int, name text, spec jsonb, UNIQUE (node_id, name));
    CREATE TABLE bench_sessions (id serial PRIMARY KEY, node_id text, peering_id int, name text, spec jsonb, UNIQUE (node_id, name))`);
  const app = express();
  app.use(express.json());
  app.post('/provision', async (req, res) => {
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      const p = await client.query(`INSERT INTO bench_peerings (node_id, name, remote_asn) VALUES ('n', $1, $2) RETURNING id`, [
        req.body.peering.name,
        req.body.peering.remote_asn,
      ]);
      await client.query(`INSERT INTO bench_interfaces (node_id, peering_id, name, spec) VALUES ('n', $1, $2, $3)`, [
        p.rows[0].id,
        req.body.interface_spec.name,
        req.body.interface_spec,
      ]);
      await client.query(`INSERT INTO bench_sessions (node_id, peering_id, name, spec) VALUES ('n', $1, $2, $3)`, [
        p.rows[0].id,
        req.body.bgp_spec.name,
        req.body.bgp_spec,
      ]);
      await client.query('COMMIT');
      res.status(201).json({ peering_id: p.rows[0].id });
    } catch (err) {
      await client.query('ROLLBACK');
      res.status(500).json({ detail: String(err) });
    } finally {
      client.release();
    }
  });
  return startApp(app);
}

export const provisionBench: Benchmark = {
  name: 'provision',
  description: 'peering provision (peering + interface + session + new generation) on a node with 200 peerings, vs bare Express + INSERTs',
  async run() {
    const existing = envInt('BENCH_PROVISION_EXISTING', 200);
    const measured = envInt('BENCH_PROVISION_COUNT', 100);
    const sys = await createTestSystem({ env: { ADMIN_TOKEN: TOKEN } });
    const control = await startApp(createControlApp(sys.context));
    const bare = await bareExpress(sys.pool);
    try {
      const base = `${control.url}/control/v1/admin`;
      const created = await fetch(`${base}/nodes`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` },
        body: JSON.stringify({
          node_id: 'busy1',
          asn: 4242420001,
          router_id: '172.20.0.1',
          link_local: 'fe80::1',
          base_template: { runtime: { wireguard_port_range: '20000-29999' } },
        }),
      });
      if (created.status !== 201) throw new Error(`node create answered ${created.status}`);
      progress(`provision: seeding ${existing} peerings`);
      for (let n = 0; n < existing; n++) await post(`${base}/nodes/busy1/peerings/provision`, spec(n));
      for (let n = 0; n < existing; n++) await post(`${bare.url}/provision`, spec(n));

      const sampler = new MemorySampler();
      const subject = await timeSequential(measured, (i) => post(`${base}/nodes/busy1/peerings/provision`, spec(existing + i)));
      const memory = sampler.stop();
      const baseline = await timeSequential(measured, (i) => post(`${bare.url}/provision`, spec(existing + i)));
      const snapshot = await sys.pool
        .query(`SELECT pg_column_size(COALESCE(g.state, e.data)) AS bytes FROM generations g LEFT JOIN events e ON e.position = g.event_position
         WHERE g.node_id = 'busy1' ORDER BY g.generation DESC LIMIT 1`);
      report({
        bench: 'provision',
        existing_peerings: existing,
        provisions: measured,
        median_ms: round(subject.p50),
        p95_ms: round(subject.p95),
        per_second: round(subject.perSecond),
        baseline_median_ms: round(baseline.p50),
        baseline_per_second: round(baseline.perSecond),
        ratio: ratio(subject.perSecond, baseline.perSecond),
        snapshot_bytes: Number(snapshot.rows[0].bytes),
        memory,
      });
    } finally {
      await bare.close();
      await control.close();
      await sys.close();
    }
  },
};
