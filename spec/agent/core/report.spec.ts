import { expect } from 'chai';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { callControl } from '../../../agent/http.js';
import { driftItems, postApplyResult, postReconciliation } from '../../../agent/report.js';
import { DEFAULT_COMMANDS, type AgentRuntime } from '../../../agent/runtime.js';
import { ADMIN_TOKEN, startControl, type ControlInstance } from '../../support/agent-socket.js';
import { issueAgentToken } from '../../support/agents.js';
import { expectResponse } from '../../support/http.js';

/**
 * The agent's report bodies at the edges of the server's schemas (2000
 * characters per message, 128 per name, 200 steps, 1000 drift items): posted
 * to a real control server, which validates them with its own schemas.
 */
describe('agent: apply-result and reconciliation-report bodies fit the server schemas', function () {
  this.timeout(30_000);
  let c: ControlInstance;
  let rt: AgentRuntime;
  let logged: { level: number; msg: string }[];

  before(async () => {
    c = await startControl();
    expectResponse(await c.admin.post('/admin/nodes', { node_id: 'fra1', asn: 4242420001, router_id: '172.20.0.1' })).status(201);
    expectResponse(
      await c.admin.post('/admin/nodes/fra1/bgp-sessions', { spec: { name: 'peer_a', remote_asn: 4242420002, neighbor_address: '172.20.53.1' } }),
    ).status(201);
    const { token } = await issueAgentToken(c.url, ADMIN_TOKEN, 'fra1');
    logged = [];
    const sink = new Writable({ write: (chunk, _enc, done) => (logged.push(JSON.parse(chunk.toString())), done()) });
    const base = `${c.url}/control/v1`;
    rt = {
      controllerUrl: base,
      nodeId: 'fra1',
      stateDir: '/nonexistent',
      renderedDir: '/nonexistent/rendered',
      version: '1.0.0',
      logger: pino({ level: 'debug' }, sink),
      commands: DEFAULT_COMMANDS,
      request: (method, path, body) => callControl(base, method, path, body, token),
      agentToken: () => token,
      applied: () => ({ generation: 1, status: 'ok', desired: null, failures: 0 }),
    };
  });
  after(() => c.close());
  beforeEach(() => (logged.length = 0));

  const refusals = () => logged.filter((l) => /^report (refused|not delivered)/.test(l.msg));

  it('clips long step details, errors and names, and keeps at most 200 steps', async () => {
    const long = 'x'.repeat(5000);
    const steps = Array.from({ length: 250 }, (_, i) => ({ name: `${'s'.repeat(200)}${i}`, status: 'failed' as const, detail: long }));
    await postApplyResult(rt, { generation: 1, status: 'failed', started_at: new Date(), error: `bird: ${long}`, steps });
    expect(refusals()).to.deep.equal([]);
    const apply = (await c.admin.get('/admin/nodes/fra1/health')).body.apply;
    expect(apply).to.deep.include({ generation: 1, status: 'failed' });
    expect(apply.error).to.have.length(2000);
    expect(apply.error.endsWith('…')).to.equal(true);
    expect(apply.steps).to.have.length(200);
    expect(apply.steps[0].name).to.have.length(128);
    expect(apply.steps[0].detail).to.have.length(2000);
  });

  it('reports drift of up to 1000 files with names cut to 128 characters, and a failed reconcile with its error', async () => {
    const paths = Array.from({ length: 1200 }, (_, i) => `wireguard/${'w'.repeat(150)}${String(i).padStart(4, '0')}.conf`);
    const drift = driftItems({ added: paths, changed: [], removed: [], unchanged: 0 });
    expect(drift).to.have.length(1000);
    await postReconciliation(rt, { generation: 1, status: 'drift', drift_items: drift });
    await postReconciliation(rt, { generation: null, status: 'failed', drift_items: [], error: 'e'.repeat(3000) });
    expect(refusals()).to.deep.equal([]);
    const [failed, drifted] = (await c.admin.get('/admin/nodes/fra1/status-events?kind=report&limit=2')).body.events;
    expect(drifted).to.deep.include({ generation: 1, status: 'drift', drift_count: 1000 });
    expect(failed).to.deep.include({ status: 'failed' });
  });

  it('logs a report the server refuses instead of throwing', async () => {
    await postApplyResult({ ...rt, nodeId: 'ams1' }, { generation: 1, status: 'succeeded', started_at: new Date(), error: null, steps: [] });
    expect(refusals().map((l) => [l.level, l.msg])).to.deep.equal([[50, 'report refused: 403 agent token is not bound to node ams1']]);
  });
});
