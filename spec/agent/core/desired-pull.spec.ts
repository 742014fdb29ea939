import { expect } from 'chai';
import { desiredSource } from '../../../agent/desired.js';
import type { AgentRuntime } from '../../../agent/runtime.js';
import { expectResponse } from '../../support/http.js';
import { wg } from '../../http/control/fleet/support.js';
import { startOpsServer, testAgent, type OpsServer, type TestAgent } from '../support/ops.js';

type Exchange = { sent: Record<string, string>; status: number; etag?: string };

/** The agent's runtime with every desired-state call recorded as it went over the wire. */
function recording(rt: AgentRuntime, log: Exchange[]): AgentRuntime {
  return {
    ...rt,
    request: async (method, path, body, headers = {}) => {
      const answer = await rt.request(method, path, body, headers);
      // (Express tags error bodies too; only a document's tag matters here.)
      const tagged = answer.status === 200 || answer.status === 304;
      if (path === '/agent/desired-state') log.push({ sent: { ...headers }, status: answer.status, ...(tagged && answer.etag ? { etag: answer.etag } : {}) });
      return answer;
    },
  } as AgentRuntime;
}

describe('agent: conditional pull of the desired state (If-None-Match, 304)', function () {
  this.timeout(30_000);
  let server: OpsServer;
  let agent: TestAgent;
  beforeEach(async () => {
    server = await startOpsServer('fra1');
    agent = await testAgent(server);
  });
  afterEach(async () => {
    await agent?.cleanup();
    await server?.close();
  });

  it('sends the held tag back, keeps the held document on a 304, and takes the new one with its tag after a change', async () => {
    const log: Exchange[] = [];
    const pull = desiredSource(recording(agent.rt, log));
    expect(await pull()).to.equal(null); // nothing published yet: 404, nothing held
    expectResponse(await server.control.admin.post('/admin/nodes/fra1/interfaces', { spec: wg('dn42_a', 51801) })).status(201);

    const first = await pull();
    expect(first!.generation).to.equal(1);
    const second = await pull();
    expect(second).to.equal(first); // the held document itself: not parsed or validated again

    expectResponse(await server.control.admin.post('/admin/nodes/fra1/interfaces', { spec: wg('dn42_b', 51802) })).status(201);
    const third = await pull();
    expect(third!.generation).to.equal(2);
    expect(third!.state.interfaces.map((i) => i.name)).to.deep.equal(['dn42_a', 'dn42_b']);
    await pull();

    const [tag1, tag2] = [log[1].etag!, log[3].etag!];
    expect(tag1).to.match(/^"1-/);
    expect(tag2).to.match(/^"2-/);
    expect(log).to.deep.equal([
      { sent: {}, status: 404 },
      { sent: {}, status: 200, etag: tag1 },
      { sent: { 'if-none-match': tag1 }, status: 304, etag: tag1 },
      { sent: { 'if-none-match': tag1 }, status: 200, etag: tag2 },
      { sent: { 'if-none-match': tag2 }, status: 304, etag: tag2 },
    ]);
  });

  it('forgets the held document when the node has none any more (404) and pulls unconditionally after', async () => {
    const answers: { status: number; body: unknown; etag?: string }[] = [];
    const log: Exchange[] = [];
    const real = recording(agent.rt, log);
    // The server's real first answer, then a 404 as a node whose desired state went away would get.
    expectResponse(await server.control.admin.post('/admin/nodes/fra1/interfaces', { spec: wg('dn42_a', 51801) })).status(201);
    const rt = {
      ...real,
      request: async (method, path, body, headers) => (answers.length ? answers.shift()! : real.request(method, path, body, headers)),
    } as AgentRuntime;
    const pull = desiredSource(rt);
    expect((await pull())!.generation).to.equal(1);
    answers.push({ status: 404, body: { detail: 'no desired state for node fra1' } });
    expect(await pull()).to.equal(null);
    expect((await pull())!.generation).to.equal(1);
    expect(log.map((e) => [e.sent, e.status])).to.deep.equal([
      [{}, 200],
      [{}, 200],
    ]);
  });
});
