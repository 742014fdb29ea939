import { expect } from 'chai';
import { expectResponse } from '../../../support/http.js';
import { startFleet, type FleetHarness } from '../fleet/support.js';
import { node } from './support.js';

/**
 * A fleet-wide write decides over the nodes that exist when it commits: a node
 * created while a block of "every non-decommissioned node" is being decided
 * either comes before it (and carries the block) or after it.
 */
describe('control: fleet-wide writes and concurrent node creation', function () {
  this.timeout(60_000);
  let h: FleetHarness;
  beforeEach(async () => {
    h = await startFleet();
    expectResponse(await h.client.post('/admin/nodes', node('base'))).status(201);
  });
  afterEach(() => h.close());

  it('a block without nodes reaches every node created before its append, under concurrent creates', async () => {
    const prefixes = ['172.23.1.0/24', '172.23.2.0/24', '172.23.3.0/24', '172.23.4.0/24'];
    const ids = Array.from({ length: 16 }, (_, i) => `n${String(i).padStart(2, '0')}`);
    const writes = [
      ...ids.map((id, i) => h.client.post('/admin/nodes', node(id, { router_id: `172.20.1.${i + 1}` }))),
      ...prefixes.map((prefix) => h.client.post('/admin/fleet/mitigations/prefix-block', { prefix })),
    ];
    for (const res of await Promise.all(writes)) expect(res.status, res.text).to.be.oneOf([200, 201]);

    const { rows } = await h.sys.pool.query<{ position: string; stream_id: string; type: string; data: any }>(
      `SELECT position, stream_id, type, data FROM events WHERE type IN ('NodeCreated', 'NodeUpdated') ORDER BY position`,
    );
    const created = new Map(rows.filter((r) => r.type === 'NodeCreated').map((r) => [r.data.node_id as string, Number(r.position)]));
    for (const prefix of prefixes) {
      const blocked = rows.filter((r) => r.type === 'NodeUpdated' && JSON.stringify(r.data.changes?.base_template ?? {}).includes(prefix));
      expect(blocked.length, prefix).to.be.greaterThan(0);
      const at = Math.max(...blocked.map((r) => Number(r.position)));
      const carriers = new Set(blocked.map((r) => r.data.node_id as string));
      for (const [id, position] of created) {
        if (position < at) expect(carriers.has(id), `${id} created before the block of ${prefix}`).to.equal(true);
        else expect(carriers.has(id), `${id} created after the block of ${prefix}`).to.equal(false);
      }
    }
    const mitigations = (await h.client.get('/admin/fleet/mitigations')).body.blocked_prefixes;
    expect(mitigations.map((m: { prefix: string }) => m.prefix)).to.deep.equal(prefixes);
  });
});
