import { expect } from 'chai';
import { agentSocket, ADMIN_TOKEN, startControl, type ControlInstance } from '../../../support/agent-socket.js';
import { issueAgentToken } from '../../../support/agents.js';
import { expectResponse } from '../../../support/http.js';
import { node } from '../fleet/support.js';
import { startAgentProcess, type AgentProcess } from './agent-process.js';
import { openSse } from './support.js';
import { eventually, within } from '../../../support/wait.js';

const ping = { tool: 'ping', target: '172.20.0.53', count: 2 };

describe('probes and logs end to end (agent process, real WebSockets, SSE)', () => {
  let c: ControlInstance;
  let fraToken: string;
  let amsToken: string;
  const agents: AgentProcess[] = [];
  const sse = (kind: 'probes' | 'logs', id: string, on: ControlInstance = c) => openSse(`${on.url}/control/v1/ui/${kind}/${id}/stream`, ADMIN_TOKEN);
  const agent = async (mode: 'answer' | 'hangup' = 'answer', on: ControlInstance = c) => {
    const a = await startAgentProcess(on.url, 'fra1', fraToken, mode);
    agents.push(a);
    return a;
  };

  before(async () => {
    c = await startControl();
    expectResponse(await c.admin.post('/admin/nodes', node('fra1'))).status(201);
    expectResponse(await c.admin.post('/admin/nodes', node('ams1', { router_id: '172.20.0.2' }))).status(201);
    fraToken = (await issueAgentToken(c.url, ADMIN_TOKEN, 'fra1')).token;
    amsToken = (await issueAgentToken(c.url, ADMIN_TOKEN, 'ams1')).token;
  });
  afterEach(async () => {
    await Promise.all(agents.splice(0).map((a) => a.stop()));
    // Free the node's seats for the next spec.
    await c.sys.pool.query(`DELETE FROM ui_jobs`);
  });
  after(() => c.close());

  it('streams a probe: the agent answers `output` twice then `done`, the SSE client sees them in order', async () => {
    const a = await agent();
    const res = await c.admin.post('/ui/probes', { node_id: 'fra1', spec: ping });
    expectResponse(res).status(202);
    const id = res.body.probe_id as string;
    const stream = await sse('probes', id);
    expect(stream.status).to.equal(200);
    const first = await stream.next();
    const second = await stream.next();
    const done = await stream.next();
    await within(stream.ended, 3000, 'stream end');
    expect([first.event, second.event, done.event]).to.deep.equal(['output', 'output', 'done']);
    expect(first.data).to.deep.equal({ type: 'output', probe_id: id, text: 'PING 172.20.0.53 count 2' });
    expect(second.data.text).to.match(/icmp_seq=1/);
    expect(done.data).to.deep.equal({ type: 'done', probe_id: id, exit_code: 0 });
    expect(stream.events).to.have.length(3);
    await a.printed(new RegExp(`probe-stream/${id} closed 1000`));
  });

  it('streams a log view as `logentries` then `done`, with the log id from the path', async () => {
    await agent();
    const res = await c.admin.post('/ui/logs', { node_id: 'fra1', spec: { mode: 'snapshot', source: 'buffer', lines: 50 } });
    expectResponse(res).status(202);
    const id = res.body.log_id as string;
    const stream = await sse('logs', id);
    await within(stream.ended, 10_000, 'stream end');
    expect(stream.events.map((e) => e.event)).to.deep.equal(['logentries', 'done']);
    expect(stream.events[0].data).to.deep.include({ log_id: id, seq: 0 });
    expect(stream.events[0].data.entries.map((e: { message: string }) => e.message)).to.deep.equal(['applied generation 3', 'session down (lines 50)']);
    expect(stream.events[1].data).to.deep.equal({ type: 'done', log_id: id });
  });

  it('ends with `done` carrying `agent disconnected` when the agent hangs up early', async () => {
    await agent('hangup');
    const id = (await c.admin.post('/ui/probes', { node_id: 'fra1', spec: ping })).body.probe_id as string;
    const stream = await sse('probes', id);
    await within(stream.ended, 10_000, 'stream end');
    expect(stream.events.map((e) => e.event)).to.deep.equal(['output', 'done']);
    expect(stream.events[1].data).to.deep.equal({ type: 'done', probe_id: id, error: 'agent disconnected' });
  });

  describe('job streams refused with 4403', () => {
    let id: string;
    beforeEach(async () => {
      // fra1 must be online when the job starts; this agent ignores the request.
      const holder = agentSocket(c.url, 'ws/fra1', fraToken);
      await holder.next('hello');
      id = (await c.admin.post('/ui/probes', { node_id: 'fra1', spec: ping })).body.probe_id as string;
      await holder.close();
    });

    it('for a job of another node', async () => {
      const stream = agentSocket(c.url, `probe-stream/${id}`, amsToken);
      expect((await stream.closed).code).to.equal(4403);
    });

    it('for an unknown job, and for a probe opened as a log stream', async () => {
      expect((await agentSocket(c.url, 'probe-stream/no-such-job', fraToken).closed).code).to.equal(4403);
      expect((await agentSocket(c.url, `log-stream/${id}`, fraToken).closed).code).to.equal(4403);
    });

    it('for a job that already has its stream, and for an expired one', async () => {
      const first = agentSocket(c.url, `probe-stream/${id}`, fraToken);
      await new Promise((resolve) => first.ws.once('open', resolve));
      first.send({ type: 'output', text: 'one' });
      await eventually(async () => (await c.sys.pool.query(`SELECT 1 FROM ui_job_messages WHERE job_id = $1`, [id])).rows.length > 0);
      const second = agentSocket(c.url, `probe-stream/${id}`, fraToken);
      expect((await second.closed).code).to.equal(4403);
      first.send({ type: 'done' });
      expect((await first.closed).code).to.equal(1000);
      expect((await agentSocket(c.url, `probe-stream/${id}`, fraToken).closed).code).to.equal(4403);

      const late = (await (async () => {
        const holder = agentSocket(c.url, 'ws/fra1', fraToken);
        await holder.next('hello');
        const res = await c.admin.post('/ui/probes', { node_id: 'fra1', spec: ping });
        await holder.close();
        return res.body.probe_id;
      })()) as string;
      c.sys.clock.advance(30_000);
      expect((await agentSocket(c.url, `probe-stream/${late}`, fraToken).closed).code).to.equal(4403);
    });

    it('and 4401 for an unresolvable token', async () => {
      expect((await agentSocket(c.url, `probe-stream/${id}`, 'agt_nothere.secretsecretsecret').closed).code).to.equal(4401);
    });
  });

  it('ignores frames that are not messages of the stream and stores what follows', async () => {
    const holder = agentSocket(c.url, 'ws/fra1', fraToken);
    await holder.next('hello');
    const id = (await c.admin.post('/ui/logs', { node_id: 'fra1', spec: { mode: 'snapshot', source: 'buffer' } })).body.log_id as string;
    const stream = agentSocket(c.url, `log-stream/${id}`, fraToken);
    await new Promise((resolve) => stream.ws.once('open', resolve));
    stream.ws.send('not json');
    stream.send({ type: 'output', text: 'a probe frame on a log stream' });
    stream.send({ type: 'log', seq: 0, entries: [{ level: 'INFO' }] });
    stream.send({ type: 'log', seq: 1, entries: [{ ts: 1, level: 'INFO', logger: 'a', message: 'kept' }] });
    stream.send({ type: 'done' });
    expect((await stream.closed).code).to.equal(1000);
    const sseStream = await sse('logs', id);
    await within(sseStream.ended, 3000, 'stream end');
    expect(sseStream.events.map((e) => [e.event, e.data.seq ?? null])).to.deep.equal([
      ['logentries', 1],
      ['done', null],
    ]);
    await holder.close();
  });

  describe('across two instances on one database', () => {
    let b: ControlInstance;
    before(async () => {
      b = await startControl(c);
    });
    after(() => b.close());

    it('streams a probe started on A from an agent connected to B', async () => {
      const a = await agent('answer', b);
      const res = await c.admin.post('/ui/probes', { node_id: 'fra1', spec: ping });
      expectResponse(res).status(202);
      const id = res.body.probe_id as string;
      await a.printed(new RegExp(`probe-stream/${id} closed 1000`));
      const onA = await sse('probes', id, c);
      await within(onA.ended, 3000, 'stream end on A');
      expect(onA.events.map((e) => e.event)).to.deep.equal(['output', 'output', 'done']);
      expect(onA.events.every((e) => e.data.probe_id === id)).to.equal(true);
    });

    it('delivers live messages stored on B to a reader on A as they come', async () => {
      const holder = agentSocket(b.url, 'ws/fra1', fraToken);
      await holder.next('hello');
      const id = (await c.admin.post('/ui/probes', { node_id: 'fra1', spec: ping })).body.probe_id as string;
      const request = await holder.next('probe_request');
      expect(request).to.deep.include({ probe_id: id });
      const onA = await sse('probes', id, c);
      const stream = agentSocket(b.url, `probe-stream/${id}`, fraToken);
      await new Promise((resolve) => stream.ws.once('open', resolve));
      const latencies: number[] = [];
      for (const text of ['one', 'two', 'three']) {
        const sent = Date.now();
        stream.send({ type: 'output', text });
        expect((await onA.next()).data.text).to.equal(text);
        latencies.push(Date.now() - sent);
      }
      if (process.env.PROBE_LATENCY) console.log(`agent on B to SSE on A: ${latencies.join(', ')} ms`);
      stream.send({ type: 'done' });
      expect((await onA.next()).event).to.equal('done');
      await within(onA.ended, 3000, 'stream end');
      // The poll is 1 s; NOTIFY carries the wake-up well before.
      expect(Math.max(...latencies), `latencies ${latencies}`).to.be.below(500);
      await holder.close();
    });
  });
});
