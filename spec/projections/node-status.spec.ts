import { expect } from 'chai';
import { recordSnapshot, type TelemetryDeps } from '../../commands/telemetry.js';
import { foldNodeStatus, nodeStatusStream, type NodeStatusEvent } from '../../domain/telemetry/health.js';
import type { RuntimeSnapshot } from '../../domain/telemetry/reports.js';
import { currentNodeStatus } from '../../projections/node-status/queries.js';
import { snapshot } from '../http/control/agent/telemetry-support.js';
import { createTestSystem, type TestSystem } from '../support/system.js';
import { tableRows } from '../support/tables.js';

const meta = { actor: 'spec' };

describe('node-status projection (node_status_current)', function () {
  this.timeout(60_000);
  let sys: TestSystem;
  const deps = (): TelemetryDeps => ({ pool: sys.pool, store: sys.store, log: sys.log, background: sys.context.background });
  const report = async (nodeId: string, sessions: Record<string, string>) => {
    await recordSnapshot(deps(), snapshot(nodeId, sessions) as RuntimeSnapshot, meta, sys.clock.now());
    await sys.context.background.drain();
    sys.clock.advance(30_000);
  };
  const stream = async (nodeId: string) =>
    (await sys.store.readStream(nodeStatusStream(nodeId))).map((e) => ({ type: e.type, data: e.data }) as NodeStatusEvent);
  const rows = () => tableRows(sys.pool, 'node_status_current', 'node_id');

  before(async () => {
    sys = await createTestSystem();
  });
  after(async () => sys?.close());

  it('keeps per node the fold of its stream and the version it stands at', async () => {
    await report('a', { p1: 'established', p2: 'established' });
    await report('a', { p1: 'established', p2: 'active', p3: 'connect' });
    await report('a', { p1: 'idle' });
    await report('b', { x: 'established' });
    expect(await rows()).to.deep.equal([
      { node_id: 'a', health: 'down', sessions: { p1: 'idle' }, version: (await stream('a')).length - 1 },
      { node_id: 'b', health: 'ok', sessions: { x: 'established' }, version: 1 },
    ]);
    expect((await currentNodeStatus(sys.pool, 'a'))?.state).to.deep.equal(foldNodeStatus(await stream('a')));
  });

  it('reproduces the rows on `projections rebuild node-status`', async () => {
    const before = await rows();
    await sys.pool.query(`UPDATE node_status_current SET health = 'ok', sessions = '{}', version = 0`);
    const [result] = await sys.projections.rebuild(['node-status']);
    expect(result.projection).to.equal('node-status');
    expect(await rows()).to.deep.equal(before);
  });

  it('drops a row its stream skipped past, decides from the stream meanwhile, and a rebuild restores it', async () => {
    // As when the projection is added to a system whose streams already hold events.
    await sys.pool.query(`DELETE FROM node_status_current WHERE node_id = 'a'`);
    await report('a', { p1: 'established' });
    expect(await currentNodeStatus(sys.pool, 'a')).to.equal(undefined);
    const events = await stream('a');
    expect(events.slice(-2)).to.deep.equal([
      { type: 'NodeHealthChanged', data: { node_id: 'a', from: 'down', to: 'ok', reasons: [] } },
      { type: 'BgpSessionStateChanged', data: { node_id: 'a', session: 'p1', from: 'idle', to: 'established', captured_at: '2026-11-01T12:00:00.000Z' } },
    ]);
    await sys.projections.rebuild(['node-status']);
    expect(await currentNodeStatus(sys.pool, 'a')).to.deep.equal({ state: foldNodeStatus(events), version: events.length - 1 });
  });
});
