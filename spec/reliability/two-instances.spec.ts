import { expect } from 'chai';
import { agentSocket, ADMIN_TOKEN, disconnect, startControl, type ControlInstance } from '../support/agent-socket.js';
import { issueAgentToken } from '../support/agents.js';
import { expectResponse } from '../support/http.js';
import { node, wg } from '../http/control/fleet/support.js';

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
    expectResponse(await a.admin.post('/admin/nodes/watch1/interfaces', { spec: wg('dn42_w0', 51810) })).status(201);
    const { token } = await issueAgentToken(a.url, ADMIN_TOKEN, 'watch1');
    const agent = agentSocket(b.url, 'ws/watch1', token);
    const hello = await agent.next('hello');

    // 40 creates, half through each instance, with five new interfaces of the watched node (each a new generation) through A in between.
    const writes: Promise<void>[] = [];
    for (let i = 0; i < 40; i++) {
      const via = i % 2 === 0 ? a : b;
      writes.push(via.admin.post('/admin/nodes', node(`two${i}`)).then((res) => void expectResponse(res).status(201)));
    }
    for (let i = 1; i <= 5; i++) expectResponse(await a.admin.post('/admin/nodes/watch1/interfaces', { spec: wg(`dn42_w${i}`, 51810 + i) })).status(201);
    expectResponse(await a.admin.patch('/admin/nodes/watch1', { labels: { round: 'last' } })).status(200);
    await Promise.all(writes);

    // Each instance lists every node, whichever instance took the write.
    for (const via of [a, b]) {
      const res = await via.admin.get('/admin/nodes');
      expectResponse(res).status(200);
      const ids = new Set((Array.isArray(res.body) ? res.body : (res.body.nodes ?? res.body.items)).map((n: { node_id: string }) => n.node_id));
      for (let i = 0; i < 40; i++) expect(ids.has(`two${i}`), `two${i} seen through ${via === a ? 'A' : 'B'}`).to.equal(true);
    }
    const watched = (await b.admin.get('/admin/nodes/watch1')).body;
    expect(watched.labels).to.deep.equal({ round: 'last' });

    // The agent on B is rung for the generations made on A, in order, up to the node's current one.
    const final = watched.current_generation as number;
    expect(final).to.be.at.least(hello.generation + 5);
    const rung: number[] = [];
    while (rung[rung.length - 1] !== final) rung.push((await agent.next('desired_state_updated')).generation);
    expect(rung).to.deep.equal([...rung].sort((x, y) => x - y));
    await disconnect(b, agent, 'watch1');
  });
});
