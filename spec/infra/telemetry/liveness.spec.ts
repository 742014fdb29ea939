import { expect } from 'chai';
import { agentStatuses, livenessOf, LIVENESS_THRESHOLDS, recordHeartbeat } from '../../../infra/telemetry/liveness.js';
import { createTestSystem, type TestSystem } from '../../support/system.js';

const at = (iso: string) => new Date(iso);

describe('Agent liveness registry', () => {
  describe('livenessOf', () => {
    const seen = at('2026-11-01T12:00:00Z');
    const after = (seconds: number) => new Date(seen.getTime() + seconds * 1000);

    it('is online up to 75 s after the last heartbeat, both bounds inclusive', () => {
      expect(LIVENESS_THRESHOLDS).to.deep.equal({ online_seconds: 75, stale_seconds: 300 });
      expect(livenessOf(seen, after(0))).to.equal('online');
      expect(livenessOf(seen, after(75))).to.equal('online');
      expect(livenessOf(seen, after(75.001))).to.equal('stale');
    });

    it('is stale up to 300 s and offline after that', () => {
      expect(livenessOf(seen, after(300))).to.equal('stale');
      expect(livenessOf(seen, after(301))).to.equal('offline');
    });

    it('is offline for a node that never sent a heartbeat', () => {
      expect(livenessOf(null, seen)).to.equal('offline');
    });
  });

  describe('recordHeartbeat and agentStatuses', () => {
    let sys: TestSystem;
    before(async () => {
      sys = await createTestSystem({ projections: [] });
    });
    after(async () => sys?.close());

    it('keeps one row per node with the latest heartbeat, read back by node ids', async () => {
      const t0 = sys.clock.now();
      await recordHeartbeat(sys.pool, 'n1', { agent_version: '1.0.1', applied_generation: 3, apply_status: 'ok' }, t0);
      sys.clock.advance(30_000);
      await recordHeartbeat(sys.pool, 'n1', { agent_version: '1.0.2', applied_generation: 4, apply_status: 'failed' }, sys.clock.now());
      await recordHeartbeat(sys.pool, 'n2', { agent_version: null, applied_generation: null, apply_status: null }, t0);

      const one = await agentStatuses(sys.pool, ['n1']);
      expect(one).to.deep.equal([{ node_id: 'n1', agent_version: '1.0.2', applied_generation: 4, apply_status: 'failed', last_seen: sys.clock.now() }]);
      const all = await agentStatuses(sys.pool);
      expect(all.map((s) => s.node_id)).to.deep.equal(['n1', 'n2']);
      expect(await agentStatuses(sys.pool, ['never'])).to.deep.equal([]);
    });

    it('never lets an older heartbeat (another instance, late) overwrite a newer one', async () => {
      const newer = sys.clock.now();
      await recordHeartbeat(sys.pool, 'n3', { agent_version: '2.0.0', applied_generation: 9, apply_status: 'ok' }, newer);
      await recordHeartbeat(sys.pool, 'n3', { agent_version: '1.0.0', applied_generation: 1, apply_status: 'ok' }, new Date(newer.getTime() - 5000));
      const [row] = await agentStatuses(sys.pool, ['n3']);
      expect(row.agent_version).to.equal('2.0.0');
      expect(row.last_seen?.getTime()).to.equal(newer.getTime());
    });
  });
});
