import { expect } from 'chai';
import { telemetryMaintenance } from '../../../commands/telemetry.js';
import { nodeStatusStream } from '../../../domain/telemetry/health.js';
import { recordHeartbeat } from '../../../infra/telemetry/liveness.js';
import { expectResponse } from '../../support/http.js';
import { applyResult, reconciliation, snapshot, startAgents, type AgentHarness } from './agent/telemetry-support.js';

describe('Admin health endpoints', function () {
  this.timeout(30_000);
  let h: AgentHarness;
  const deps = () => ({ pool: h.sys.pool, store: h.sys.store, log: h.sys.log, background: h.sys.context.background });

  before(async () => {
    h = await startAgents(['n1', 'n2', 'n3']);
  });
  after(async () => h?.close());

  it('answers 404 for a node without report and for an unknown node', async () => {
    expectResponse(await h.admin.get('/admin/nodes/n1/health'))
      .status(404)
      .detail('no report for node n1');
    expectResponse(await h.admin.get('/admin/nodes/ghost/health'))
      .status(404)
      .detail('unknown node ghost');
    expectResponse(await h.admin.get('/admin/nodes/ghost/status-events'))
      .status(404)
      .detail('unknown node ghost');
  });

  it('shows every node with health and liveness, and counts them', async () => {
    await h.agent.n1.post('/agent/runtime-snapshot', snapshot('n1'));
    await h.agent.n2.post('/agent/runtime-snapshot', snapshot('n2', { p1: 'established', p2: 'idle' }));
    await recordHeartbeat(h.sys.pool, 'n1', { agent_version: '1.0.200', applied_generation: 1, apply_status: 'succeeded' }, h.sys.clock.now());
    await h.sys.context.background.drain();

    const res = await h.admin.get('/admin/health');
    expectResponse(res).status(200);
    expect(res.body.summary).to.deep.equal({ total: 3, ok: 1, degraded: 1, stale: 0, down: 0, unknown: 1, agents: { online: 1, stale: 0, offline: 2 } });
    const byId = Object.fromEntries(res.body.nodes.map((n: { node_id: string }) => [n.node_id, n]));
    expect(byId.n1).to.deep.include({
      health: 'ok',
      liveness: 'online',
      agent_version: '1.0.200',
      applied_generation: 1,
      bgp_established: 2,
      bgp_total: 2,
      reasons: [],
    });
    expect(byId.n2).to.deep.include({ health: 'degraded', liveness: 'offline', reasons: ['1 of 2 bgp sessions not established'] });
    expect(byId.n3).to.deep.include({ health: 'unknown', liveness: 'offline', snapshot_at: null, bgp_total: null, last_heartbeat_at: null });
  });

  it('moves liveness online → stale → offline at 75 s and 300 s after the heartbeat', async () => {
    const liveness = async () => (await h.admin.get('/admin/health')).body.nodes.find((n: { node_id: string }) => n.node_id === 'n1').liveness;
    const start = h.sys.clock.now().getTime();
    await recordHeartbeat(h.sys.pool, 'n1', { agent_version: '1.0.200', applied_generation: 1, apply_status: 'succeeded' }, new Date(start));
    h.sys.clock.current = new Date(start + 75_000);
    expect(await liveness()).to.equal('online');
    h.sys.clock.current = new Date(start + 76_000);
    expect(await liveness()).to.equal('stale');
    h.sys.clock.current = new Date(start + 300_000);
    expect(await liveness()).to.equal('stale');
    h.sys.clock.current = new Date(start + 301_000);
    expect(await liveness()).to.equal('offline');
    h.sys.clock.current = new Date(start);
  });

  it('gives one node its health with the latest snapshot, report and apply', async () => {
    await h.agent.n1.post('/agent/reconciliation-report', reconciliation('n1'));
    await h.agent.n1.post('/agent/apply-result', applyResult('n1'));
    const res = await h.admin.get('/admin/nodes/n1/health');
    expectResponse(res).status(200);
    expect(res.body).to.deep.include({ node_id: 'n1', health: 'ok', liveness: 'online' });
    expect(res.body.snapshot).to.deep.include({ node_id: 'n1', captured_at: '2026-11-01T12:00:00Z' });
    expect(res.body.snapshot.received_at).to.be.a('string');
    expect(res.body.report).to.deep.include({ status: 'drift' });
    expect(res.body.apply).to.deep.include({ status: 'succeeded', generation: 1 });
  });

  it('lists status events newest first, filtered by kind, limited 1 to 500 (default 50)', async () => {
    await h.agent.n1.post('/agent/apply-result', applyResult('n1', 'failed', 2));
    await h.agent.n1.post('/agent/wireguard-reresolve', { node_id: 'n1', checked_at: '2026-11-01T12:00:00Z', interfaces: [] });
    const all = (await h.admin.get('/admin/nodes/n1/status-events')).body;
    expect(all.node_id).to.equal('n1');
    expect(all.events.map((e: { kind: string }) => e.kind)).to.deep.equal(['reresolve', 'apply', 'apply', 'report', 'snapshot']);
    const ids = all.events.map((e: { id: number }) => e.id);
    expect(ids).to.deep.equal([...ids].sort((a: number, b: number) => b - a));
    const applies = (await h.admin.get('/admin/nodes/n1/status-events?kind=apply&limit=1')).body.events;
    expect(applies).to.have.length(1);
    expect(applies[0]).to.deep.include({ kind: 'apply', generation: 2, status: 'failed', drift_count: null });
    const report = (await h.admin.get('/admin/nodes/n1/status-events?kind=report')).body.events[0];
    expect(report).to.deep.include({ kind: 'report', status: 'drift', drift_count: 2 });
    for (const q of ['limit=0', 'limit=501', 'kind=bogus']) expectResponse(await h.admin.get(`/admin/nodes/n1/status-events?${q}`)).status(422);
    expect((await h.admin.get('/admin/nodes/n1/status-events?limit=500')).body.events).to.have.length(5);
  });

  it('returns 50 status events unless told otherwise', async () => {
    for (let i = 0; i < 51; i++) await h.agent.n3.post('/agent/wireguard-reresolve', { node_id: 'n3', checked_at: '2026-11-01T12:00:00Z', interfaces: [] });
    expect((await h.admin.get('/admin/nodes/n3/status-events')).body.events).to.have.length(50);
    expect((await h.admin.get('/admin/nodes/n3/status-events?limit=500')).body.events).to.have.length(51);
  });

  it('turns a node stale without a report: read derives it, the job records the transition once', async () => {
    h.sys.clock.advance(301_000);
    const line = (await h.admin.get('/admin/health')).body.nodes.find((n: { node_id: string }) => n.node_id === 'n2');
    expect(line.health).to.equal('stale');
    const first = await telemetryMaintenance(deps(), h.sys.clock.now());
    expect(first.stale).to.deep.equal(['n1', 'n2']);
    expect((await telemetryMaintenance(deps(), h.sys.clock.now())).stale).to.deep.equal([]);
    const last = (await h.sys.store.readStream(nodeStatusStream('n2'))).filter((e) => e.type === 'NodeHealthChanged').at(-1);
    expect(last?.data).to.deep.include({ from: 'degraded', to: 'stale' });
  });

  it('requires the admin credential', async () => {
    expectResponse(await h.agent.n1.get('/admin/health')).status(401);
  });
});
