import { expect } from 'chai';
import { agentSocket, ADMIN_TOKEN, disconnect, startControl, type ControlInstance } from '../support/agent-socket.js';
import { issueAgentToken } from '../support/agents.js';
import { expectResponse } from '../support/http.js';
import { node } from '../http/control/fleet/support.js';

/**
 * Two instances under concurrent writes through both. The single-request cases
 * (doorbell across instances, token revocation, notify, spilled events, a crashed
 * instance) are in spec/http/control/agent/two-instances.spec.ts; the shared login
 * block and spent captcha tickets in spec/http/control/auth.spec.ts and
 * spec/http/identity/captcha.spec.ts.
 */
describe('two control instances sharing one database, under concurrent writes through both', function () {
  this.timeout(120_000);
  let a: ControlInstance;
  let b: ControlInstance;

  before(async () => {
    a = await startControl();
    b = await startControl(a);
  });
  after(async () => {
    await b?.close();
    await a?.close();
  });

  it('accepts every write through either instance, each sees the other’s, and an agent on B gets the doorbell of every write on A', async () => {
    expectResponse(await a.admin.post('/admin/nodes', node('watch1'))).status(201);
    const { token } = await issueAgentToken(a.url, ADMIN_TOKEN, 'watch1');
    const agent = agentSocket(b.url, 'ws/watch1', token);
    await agent.next('hello');

    // 40 creates, half through each instance, with PATCHes of the watched node through A in between.
    const writes: Promise<void>[] = [];
    for (let i = 0; i < 40; i++) {
      const via = i % 2 === 0 ? a : b;
      writes.push(via.admin.post('/admin/nodes', node(`two${i}`)).then((res) => void expectResponse(res).status(201)));
    }
    const generations: number[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await a.admin.patch('/admin/nodes/watch1', { labels: { round: String(i) } });
      expectResponse(res).status(200);
      generations.push(res.body.current_generation);
    }
    await Promise.all(writes);

    // Each instance lists every node, whichever instance took the write.
    for (const via of [a, b]) {
      const res = await via.admin.get('/admin/nodes');
      expectResponse(res).status(200);
      const ids = new Set((Array.isArray(res.body) ? res.body : res.body.nodes ?? res.body.items).map((n: { node_id: string }) => n.node_id));
      for (let i = 0; i < 40; i++) expect(ids.has(`two${i}`), `two${i} seen through ${via === a ? 'A' : 'B'}`).to.equal(true);
    }
    expect((await b.admin.get('/admin/nodes/watch1')).body.labels).to.deep.equal({ round: '4' });

    // The agent on B was rung for each generation its node got on A, in order (a label change may not make a new generation: then no ring).
    const distinct = [...new Set(generations.filter((g) => typeof g === 'number'))];
    for (const g of distinct.filter((x) => x > 1)) {
      const ring = await agent.next('desired_state_updated');
      expect(ring.generation).to.equal(g);
    }
    await disconnect(b, agent, 'watch1');
  });
});
