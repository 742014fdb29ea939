// (g) `GET /` of the home site, brotli accepted, over real HTTP with keep-alive
// connections: requests per second through the site app (request id and lean
// access log, the method check, the path lookup, ETag freshness, encoding
// negotiation) against a bare Express handler that sends the same compressed
// bytes, in the same run and process. The page carries the seeded fleet's map.
import { brotliDecompressSync } from 'node:zlib';
import express from 'express';
import { raw, seedFleet, startControl, startSiteWith } from '../spec/http/site/support.js';
import { startApp } from '../spec/support/system.js';
import { combined, envInt, hammer, MemorySampler, progress, ratio, report, round, type Benchmark, type Timing } from './support.js';

const BR = { 'accept-encoding': 'gzip, deflate, br' };

export const siteBench: Benchmark = {
  name: 'site',
  description: 'GET / of the home site (brotli) through the site app, vs a bare Express handler sending the same bytes',
  async run() {
    const total = envInt('BENCH_SITE_REQUESTS', 20_000);
    const concurrency = envInt('BENCH_SITE_CONCURRENCY', 16);
    const rounds = envInt('BENCH_SITE_ROUNDS', 4);
    progress('site: seeding a fleet and baking the page');
    const control = await startControl();
    await seedFleet(control);
    const site = await startSiteWith({ CONTROL_URL: control.url });
    try {
      const page = (await raw(site.url, '/')).body.toString('utf8');
      const compressed = (await raw(site.url, '/', { headers: BR })).body;
      if (brotliDecompressSync(compressed).toString('utf8') !== page) throw new Error('the site does not answer brotli');
      const app = express();
      app.get('/', (_req, res) => {
        res.set({ 'Content-Type': 'text/html; charset=utf-8', 'Content-Encoding': 'br', 'Cache-Control': 'public, max-age=300' });
        res.end(compressed);
      });
      const bare = await startApp(app);
      try {
        await hammer(`${site.url}/`, Math.min(2000, total), concurrency, BR);
        await hammer(`${bare.url}/`, Math.min(2000, total), concurrency, BR);
        // Alternating rounds, so that a change in the machine's load hits both sides alike.
        const sampler = new MemorySampler();
        const subjects: Timing[] = [];
        const baselines: Timing[] = [];
        const perRound = Math.ceil(total / rounds);
        for (let r = 0; r < rounds; r++) {
          if (r % 2 === 0) {
            subjects.push(await hammer(`${site.url}/`, perRound, concurrency, BR));
            baselines.push(await hammer(`${bare.url}/`, perRound, concurrency, BR));
          } else {
            baselines.push(await hammer(`${bare.url}/`, perRound, concurrency, BR));
            subjects.push(await hammer(`${site.url}/`, perRound, concurrency, BR));
          }
        }
        const memory = sampler.stop();
        const subject = combined(subjects);
        const baseline = combined(baselines);
        report({
          bench: 'site',
          page_bytes: Buffer.byteLength(page),
          body_bytes_br: subject.bytes,
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
          ok: subject.bytes === compressed.length,
          memory,
        });
      } finally {
        await bare.close();
      }
    } finally {
      await site.close();
      await control.close();
    }
  },
};
