// (f) `GET /control/v1/public/map` on a warm cache, over real HTTP with
// keep-alive connections: requests per second through the whole control app
// (request id and lean access log, the public router mounted ahead of the common
// front, the cache lookup, ETag) against a bare
// Express handler that answers `res.json()` with the same document, in the same
// run and process.
import express from 'express';
import { createControlApp } from '../http/control/app.js';
import { upsertSnapshot } from '../infra/telemetry/store.js';
import type { RuntimeSnapshot } from '../domain/telemetry/reports.js';
import { CITIES } from '../domain/public/cities.js';
import { createTestSystem, startApp, type TestSystem } from '../spec/support/system.js';
import { combined, envInt, hammer, MemorySampler, progress, ratio, report, round, type Benchmark, type Timing } from './support.js';

const TOKEN = 'bench-admin-token-0123456789abcdef';

/** A fleet of `count` nodes over the city table, each linked to the next, all reporting a fresh snapshot. */
async function seedFleet(sys: TestSystem, base: string, count: number): Promise<void> {
  const codes = Object.keys(CITIES);
  const send = async (method: string, path: string, body: unknown) => {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` },
      body: JSON.stringify(body),
    });
    if (res.status >= 300) throw new Error(`${method} ${path} answered ${res.status}: ${await res.text()}`);
  };
  const id = (i: number) => `node${String(i).padStart(3, '0')}`;
  for (let i = 0; i < count; i++) {
    await send('POST', '/admin/nodes', {
      node_id: id(i),
      asn: 4242420001,
      router_id: `172.20.${i >> 8}.${i & 255}`,
      site: `${codes[i % codes.length].toLowerCase()}${1 + Math.floor(i / codes.length)}`,
    });
  }
  for (let i = 0; i < count; i++) {
    await send('POST', `/admin/nodes/${id(i)}/peerings/provision`, {
      peering: { name: `to_${id((i + 1) % count)}`, remote_asn: 4242420001, remote_node_id: id((i + 1) % count), is_internal: true },
      interface_spec: { name: `wg_${i}`, listen_port: 52801, addresses: ['fe80::1/64'] },
    });
    const snapshot: RuntimeSnapshot = {
      node_id: id(i),
      captured_at: sys.clock.now().toISOString(),
      containers: [],
      interfaces: [],
      wireguard_interfaces: [],
      bgp_protocols: [{ name: 'ibgp', state: 'established', since: null, remote_asn: 4242420001, routes_imported: 100, routes_exported: 10 }],
      self_metrics: { cpu: 1, rss: 1, total_failures: 0, log_warning_count: 0, log_error_count: 0, last_error_at: null, last_error_message: null },
    } as RuntimeSnapshot;
    await upsertSnapshot(sys.pool, snapshot, sys.clock.now());
  }
}

export const publicMapBench: Benchmark = {
  name: 'public-map',
  description: 'GET /public/map on a warm cache through the control app, vs a bare Express res.json() of the same document',
  async run() {
    const total = envInt('BENCH_PUBLIC_MAP_REQUESTS', 20_000);
    const concurrency = envInt('BENCH_PUBLIC_MAP_CONCURRENCY', 16);
    const nodes = envInt('BENCH_PUBLIC_MAP_NODES', 60);
    const rounds = envInt('BENCH_PUBLIC_MAP_ROUNDS', 4);
    const sys = await createTestSystem({ env: { ADMIN_TOKEN: TOKEN } });
    const control = await startApp(createControlApp(sys.context));
    try {
      progress(`public-map: seeding ${nodes} nodes`);
      await seedFleet(sys, `${control.url}/control/v1`, nodes);
      const subjectUrl = `${control.url}/control/v1/public/map`;
      const warm = await (await fetch(subjectUrl)).text();
      const document = JSON.parse(warm) as Record<string, unknown>;

      const app = express();
      app.get('/map', (_req, res) => {
        res.json(document);
      });
      const bare = await startApp(app);
      try {
        const bareText = await (await fetch(`${bare.url}/map`)).text();
        if (bareText !== warm) throw new Error('the bare handler does not answer the same JSON');
        await hammer(subjectUrl, Math.min(2000, total), concurrency);
        await hammer(`${bare.url}/map`, Math.min(2000, total), concurrency);

        // Alternating rounds, so that a change in the machine's load hits both sides alike.
        const sampler = new MemorySampler();
        const subjects: Timing[] = [];
        const baselines: Timing[] = [];
        for (let round = 0; round < rounds; round++) {
          const perRound = Math.ceil(total / rounds);
          if (round % 2 === 0) {
            subjects.push(await hammer(subjectUrl, perRound, concurrency));
            baselines.push(await hammer(`${bare.url}/map`, perRound, concurrency));
          } else {
            baselines.push(await hammer(`${bare.url}/map`, perRound, concurrency));
            subjects.push(await hammer(subjectUrl, perRound, concurrency));
          }
        }
        const memory = sampler.stop();
        const subject = combined(subjects);
        const baseline = combined(baselines);
        const stillCached = (await (await fetch(subjectUrl)).text()) === warm;
        report({
          bench: 'public-map',
          nodes,
          map_points: (document.nodes as unknown[]).length,
          map_links: (document.links as unknown[]).length,
          body_bytes: subject.bytes,
          requests: total,
          concurrency,
          per_second: round(subject.perSecond),
          p50_ms: round(subject.p50),
          p99_ms: round(subject.p99),
          baseline_per_second: round(baseline.perSecond),
          baseline_p50_ms: round(baseline.p50),
          baseline_p99_ms: round(baseline.p99),
          rounds,
          ratio: ratio(subject.perSecond, baseline.perSecond),
          round_ratios: subjects.map((t, i) => ratio(t.perSecond, baselines[i].perSecond)),
          ok: stillCached,
          memory,
        });
      } finally {
        await bare.close();
      }
    } finally {
      await control.close();
      await sys.close();
    }
  },
};
