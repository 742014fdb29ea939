import { expect } from 'chai';
import { jobStore } from '../../../../infra/jobs/store.js';
import { expectResponse } from '../../../support/http.js';
import { openSse, startProbes, type ProbeHarness } from './support.js';
import { within } from '../../../support/wait.js';

const ping = (target = '172.20.0.53', extra: Record<string, unknown> = {}) => ({ tool: 'ping', target, ...extra });
const tail = (extra: Record<string, unknown> = {}) => ({ mode: 'tail', source: 'buffer', ...extra });

describe('POST /ui/probes and /ui/logs', () => {
  let h: ProbeHarness;
  beforeEach(async () => {
    h = await startProbes(['fra1', 'ams1']);
  });
  afterEach(() => h.close());

  it('starts a probe: 202 with its id, and rings the node with the complete spec', async () => {
    await h.online('fra1');
    const res = await h.admin.post('/ui/probes', { node_id: 'fra1', spec: ping('fe80::2', { interface: 'dn42_peer', count: 3 }) });
    expectResponse(res).status(202);
    expect(res.body.probe_id).to.be.a('string').with.length.above(8);
    expect(h.sys.broadcaster.calls.filter((c) => c.type === 'probe_request')).to.deep.equal([
      {
        type: 'probe_request',
        node_id: 'fra1',
        probe_id: res.body.probe_id,
        spec: { tool: 'ping', target: 'fe80::2', count: 3, resolve: true, interface: 'dn42_peer', max_size: null },
      },
    ]);
  });

  it('starts a log view and rings `log_request` with the defaults filled', async () => {
    await h.online('fra1');
    const res = await h.admin.post('/ui/logs', { node_id: 'fra1', spec: tail({ min_level: 'WARNING' }) });
    expectResponse(res).status(202);
    expect(h.sys.broadcaster.calls.find((c) => c.type === 'log_request')).to.deep.equal({
      type: 'log_request',
      node_id: 'fra1',
      log_id: res.body.log_id,
      spec: { mode: 'tail', source: 'buffer', lines: 200, min_level: 'WARNING', contains: null, duration_seconds: 120 },
    });
  });

  it('answers 404 for an unknown node and 409 when no agent of the node is online', async () => {
    expectResponse(await h.admin.post('/ui/probes', { node_id: 'nope', spec: ping() }))
      .status(404)
      .detail('unknown node nope');
    expectResponse(await h.admin.post('/ui/probes', { node_id: 'fra1', spec: ping() }))
      .status(409)
      .detail('node fra1 has no connected agent');
    expectResponse(await h.admin.post('/ui/logs', { node_id: 'fra1', spec: tail() }))
      .status(409)
      .detail('node fra1 has no connected agent');
    expect(h.sys.broadcaster.calls.filter((c) => c.type === 'probe_request' || c.type === 'log_request')).to.deep.equal([]);
  });

  it('refuses targets outside the dn42, private and link-local ranges with `invalid target <x>`', async () => {
    await h.online('fra1');
    for (const target of ['8.8.8.8', '2001:db8::1', '127.0.0.1', 'node.dn42', '10.1']) {
      const res = await h.admin.post('/ui/probes', { node_id: 'fra1', spec: ping(target) });
      expectResponse(res).status(422).detail(`invalid target ${target}`);
      expect(res.body.detail.errors[0].loc).to.deep.equal(['body', 'spec', 'target']);
    }
  });

  it('validates every spec field against its bounds', async () => {
    await h.online('fra1');
    const bad: [string, Record<string, unknown>][] = [
      ['/ui/probes', ping(undefined, { tool: 'nmap' })],
      ['/ui/probes', ping(undefined, { count: 0 })],
      ['/ui/probes', ping(undefined, { count: 31 })],
      ['/ui/probes', ping(undefined, { resolve: 'yes' })],
      ['/ui/probes', ping(undefined, { interface: 'a-sixteen-chars1' })],
      ['/ui/probes', ping(undefined, { interface: '-I' })],
      ['/ui/probes', ping(undefined, { max_size: 1279 })],
      ['/ui/probes', ping(undefined, { max_size: 9201 })],
      ['/ui/probes', ping(undefined, { extra: 1 })],
      ['/ui/logs', tail({ mode: 'follow' })],
      ['/ui/logs', tail({ lines: 9 })],
      ['/ui/logs', tail({ lines: 2001 })],
      ['/ui/logs', tail({ min_level: 'TRACE' })],
      ['/ui/logs', tail({ contains: 'x'.repeat(201) })],
      ['/ui/logs', tail({ duration_seconds: 9 })],
      ['/ui/logs', tail({ duration_seconds: 601 })],
    ];
    for (const [path, spec] of bad) {
      const res = await h.admin.post(path, { node_id: 'fra1', spec });
      expect(res.status, `${path} ${JSON.stringify(spec)}: ${res.text}`).to.equal(422);
    }
    expectResponse(await h.admin.post('/ui/logs', { node_id: 'fra1', spec: tail({ source: 'journal' }) }))
      .status(422)
      .detail('invalid source journal: tail supports only buffer');
    expectResponse(
      await h.admin.post('/ui/logs', { node_id: 'fra1', spec: { mode: 'snapshot', source: 'journal', lines: 2000, contains: 'x'.repeat(200) } }),
    ).status(202);
    expectResponse(
      await h.admin.post('/ui/probes', { node_id: 'fra1', spec: ping(undefined, { tool: 'mtu', max_size: 9200, interface: 'a-fifteen-char1' }) }),
    ).status(202);
  });

  it('describes the four endpoints in the OpenAPI document, specs included', async () => {
    const doc = (await h.admin.get('/openapi.json')).body;
    for (const path of ['/control/v1/ui/probes', '/control/v1/ui/logs', '/control/v1/ui/probes/{probe_id}/stream', '/control/v1/ui/logs/{log_id}/stream']) {
      expect(doc.paths, path).to.have.property(path);
    }
    const spec = doc.paths['/control/v1/ui/probes'].post.requestBody.content['application/json'].schema.properties.spec;
    expect(spec.properties.count).to.deep.include({ minimum: 1, maximum: 30, default: 10 });
  });

  it('needs the admin Bearer', async () => {
    expect((await h.admin.post('/ui/probes', { node_id: 'fra1', spec: ping() }, { token: 'wrong-token-0123456789' })).status).to.equal(401);
    expect((await openSse(`${h.url}/control/v1/ui/probes/x/stream`, 'wrong-token-0123456789')).status).to.equal(401);
  });

  describe('quota', () => {
    it('allows 3 running jobs per node, probes and log views together, then 429', async () => {
      await h.online('fra1');
      await h.online('ams1');
      expectResponse(await h.admin.post('/ui/probes', { node_id: 'fra1', spec: ping() })).status(202);
      expectResponse(await h.admin.post('/ui/logs', { node_id: 'fra1', spec: tail() })).status(202);
      expectResponse(await h.admin.post('/ui/probes', { node_id: 'fra1', spec: ping() })).status(202);
      expectResponse(await h.admin.post('/ui/probes', { node_id: 'fra1', spec: ping() }))
        .status(429)
        .detail('too many running probe and log jobs on node fra1 (at most 3)');
      expectResponse(await h.admin.post('/ui/logs', { node_id: 'fra1', spec: tail() })).status(429);
      expectResponse(await h.admin.post('/ui/probes', { node_id: 'ams1', spec: ping() })).status(202);
    });

    it('gives the seat back when a job is done, or when its agent never connects within 30 s', async () => {
      await h.online('fra1');
      const ids: string[] = [];
      for (let i = 0; i < 3; i++) ids.push((await h.admin.post('/ui/probes', { node_id: 'fra1', spec: ping() })).body.probe_id);
      expectResponse(await h.admin.post('/ui/probes', { node_id: 'fra1', spec: ping() })).status(429);

      await jobStore.attach(h.sys.pool, ids[0], 'probe', 'fra1', h.sys.clock.now());
      expect(await jobStore.append(h.sys.pool, ids[0], 'done', { type: 'done' }, h.sys.clock.now())).to.equal('stored');
      expectResponse(await h.admin.post('/ui/probes', { node_id: 'fra1', spec: ping() })).status(202);
      expectResponse(await h.admin.post('/ui/probes', { node_id: 'fra1', spec: ping() })).status(429);

      h.sys.clock.advance(30_000);
      for (let i = 0; i < 3; i++) expectResponse(await h.admin.post('/ui/probes', { node_id: 'fra1', spec: ping() })).status(202);
    });

    it('takes exactly the free seats when requests race, on one node', async () => {
      await h.online('fra1');
      const answers = await Promise.all(Array.from({ length: 12 }, () => h.admin.post('/ui/probes', { node_id: 'fra1', spec: ping() })));
      expect(answers.map((a) => a.status).sort()).to.deep.equal([202, 202, 202, ...Array(9).fill(429)]);
      expect(await jobStore.openCount(h.sys.pool, 'fra1', h.sys.clock.now())).to.equal(3);
    });

    it('allows 256 running jobs over all nodes, then 429', async () => {
      await h.online('fra1');
      // 256 jobs of other nodes, as other instances would have created them.
      await h.sys.pool.query(
        `INSERT INTO ui_jobs (id, kind, node_id, spec, status, run_ms, created_at, deadline)
         SELECT 'job-' || n, 'probe', 'node-' || (n % 100), '{}', 'running', 120000, $1, $1::timestamptz + interval '1 minute' FROM generate_series(1, 256) n`,
        [h.sys.clock.now()],
      );
      expectResponse(await h.admin.post('/ui/probes', { node_id: 'fra1', spec: ping() }))
        .status(429)
        .detail('too many running probe and log jobs (at most 256)');
      await h.sys.pool.query(`UPDATE ui_jobs SET status = 'done', done_at = $1 WHERE id = 'job-1'`, [h.sys.clock.now()]);
      expectResponse(await h.admin.post('/ui/logs', { node_id: 'fra1', spec: tail() })).status(202);
    });
  });
});

describe('GET /ui/probes/{id}/stream and /ui/logs/{id}/stream', () => {
  let h: ProbeHarness;
  before(async () => {
    h = await startProbes(['fra1']);
    await h.online('fra1');
  });
  after(() => h.close());

  const stream = (kind: 'probes' | 'logs', id: string, headers?: Record<string, string>) =>
    openSse(`${h.url}/control/v1/ui/${kind}/${id}/stream`, undefined, headers);
  const start = async (kind: 'probe' | 'log') => {
    const res =
      kind === 'probe'
        ? await h.admin.post('/ui/probes', { node_id: 'fra1', spec: ping() })
        : await h.admin.post('/ui/logs', { node_id: 'fra1', spec: tail() });
    expect(res.status, res.text).to.equal(202);
    const id = (res.body.probe_id ?? res.body.log_id) as string;
    // Seats are not what these specs are about.
    await h.sys.pool.query(`DELETE FROM ui_jobs WHERE id <> $1 AND status <> 'done'`, [id]);
    return id;
  };
  const append = (id: string, event: string, data: Record<string, unknown>) => jobStore.append(h.sys.pool, id, event, data, h.sys.clock.now());

  it('sends the buffered messages first, then live ones, `done` last, and ends', async () => {
    const id = await start('probe');
    await jobStore.attach(h.sys.pool, id, 'probe', 'fra1', h.sys.clock.now());
    await append(id, 'output', { type: 'output', probe_id: id, line: 'PING 172.20.0.53' });
    await append(id, 'output', { type: 'output', probe_id: id, line: '64 bytes from 172.20.0.53: icmp_seq=1' });
    const sse = await stream('probes', id);
    expect(sse.status).to.equal(200);
    expect((await sse.next()).data.line).to.equal('PING 172.20.0.53');
    expect((await sse.next()).data.line).to.match(/icmp_seq=1/);
    await append(id, 'output', { type: 'output', probe_id: id, line: '64 bytes from 172.20.0.53: icmp_seq=2' });
    const live = await sse.next();
    expect(live).to.deep.include({ id: '3', event: 'output' });
    await append(id, 'done', { type: 'done', probe_id: id });
    expect(await sse.next()).to.deep.equal({ id: '4', event: 'done', data: { type: 'done', probe_id: id } });
    await within(sse.ended, 3000, 'stream end after done');
    expect(sse.events.map((e) => e.event)).to.deep.equal(['output', 'output', 'output', 'done']);
  });

  it('replays a finished job to a late reader for 120 s, then answers 404', async () => {
    const id = await start('log');
    await jobStore.attach(h.sys.pool, id, 'log', 'fra1', h.sys.clock.now());
    await append(id, 'logentries', {
      type: 'log',
      log_id: id,
      seq: 0,
      entries: [{ ts: '2026-11-01T12:00:00Z', level: 'INFO', logger: 'agent', message: 'hello' }],
    });
    await append(id, 'done', { type: 'done', log_id: id });
    const sse = await stream('logs', id);
    await within(sse.ended, 3000, 'stream end');
    expect(sse.events.map((e) => e.event)).to.deep.equal(['logentries', 'done']);
    expect(sse.events[0].data.entries[0].message).to.equal('hello');

    h.sys.clock.advance(119_000);
    expect((await stream('logs', id)).status).to.equal(200);
    h.sys.clock.advance(1_000);
    const late = await stream('logs', id);
    expect(late.status).to.equal(404);
    expect(late.body).to.deep.equal({ detail: `unknown log ${id}` });
  });

  it('resumes after Last-Event-ID', async () => {
    const id = await start('probe');
    await jobStore.attach(h.sys.pool, id, 'probe', 'fra1', h.sys.clock.now());
    for (const line of ['a', 'b', 'c']) await append(id, 'output', { type: 'output', line });
    await append(id, 'done', { type: 'done' });
    const sse = await stream('probes', id, { 'last-event-id': '2' });
    await within(sse.ended, 3000, 'stream end');
    expect(sse.events.map((e) => e.data.line ?? e.event)).to.deep.equal(['c', 'done']);
    const past = await stream('probes', id, { 'last-event-id': '4' });
    await within(past.ended, 3000, 'a stream resumed past done ends');
    expect(past.events).to.deep.equal([]);
  });

  it('pages through a long buffer in order', async () => {
    const id = await start('probe');
    await jobStore.attach(h.sys.pool, id, 'probe', 'fra1', h.sys.clock.now());
    await h.sys.pool.query(
      `INSERT INTO ui_job_messages (job_id, seq, event, data) SELECT $1, n, 'output', jsonb_build_object('line', n::text) FROM generate_series(1, 1200) n`,
      [id],
    );
    await h.sys.pool.query(`UPDATE ui_jobs SET last_seq = 1200 WHERE id = $1`, [id]);
    await append(id, 'done', { type: 'done' });
    const sse = await stream('probes', id);
    await within(sse.ended, 5000, 'stream end');
    expect(sse.events).to.have.length(1201);
    expect(sse.events.slice(0, 1200).every((e, i) => e.data.line === String(i + 1))).to.equal(true);
    expect(sse.events[1200]).to.deep.include({ id: '1201', event: 'done' });
  });

  it('answers 404 for unknown jobs and for a job of the other kind', async () => {
    const id = await start('probe');
    expect((await stream('probes', 'no-such-job')).status).to.equal(404);
    expect((await stream('logs', id)).status).to.equal(404);
    expect((await stream('probes', id)).status).to.equal(200);
  });

  it('ends without `done` when the agent never connects, and the job is then gone', async () => {
    const id = await start('probe');
    const sse = await stream('probes', id);
    expect(sse.status).to.equal(200);
    h.sys.clock.advance(30_000);
    await within(sse.ended, 4000, 'stream end on timeout');
    expect(sse.events).to.deep.equal([]);
    expect((await stream('probes', id)).status).to.equal(404);
    expect(await jobStore.attach(h.sys.pool, id, 'probe', 'fra1', h.sys.clock.now())).to.equal(undefined);
  });

  it('ends without `done` when a running job passes its deadline, and refuses its later output', async () => {
    const id = await start('probe');
    await jobStore.attach(h.sys.pool, id, 'probe', 'fra1', h.sys.clock.now());
    await append(id, 'output', { type: 'output', line: 'x' });
    const sse = await stream('probes', id);
    await sse.next();
    h.sys.clock.advance(120_000);
    await within(sse.ended, 4000, 'stream end on timeout');
    expect(sse.events.map((e) => e.event)).to.deep.equal(['output']);
    expect(await append(id, 'done', { type: 'done' })).to.equal('closed');
  });
});
