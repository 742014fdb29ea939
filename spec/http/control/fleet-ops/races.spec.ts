import { expect } from 'chai';
import { expectResponse } from '../../../support/http.js';
import type { TestSystem } from '../../../support/system.js';
import { startFleet, type FleetHarness } from '../fleet/support.js';
import { node } from './support.js';

interface NodeEventRow {
  position: string;
  tx: string;
  type: 'NodeCreated' | 'NodeUpdated';
  data: { node_id: string; changes?: { base_template?: unknown } };
}

const carries = (row: NodeEventRow, prefix: string) => row.type === 'NodeUpdated' && JSON.stringify(row.data.changes?.base_template ?? {}).includes(prefix);

/**
 * Checks that each prefix's block reached exactly the nodes created before it.
 * A block's own append is the first transaction whose templates carry the
 * prefix: a later block writes the whole template again, so its events carry
 * the earlier prefixes too and do not say when those were blocked.
 */
async function expectBlocksOverNodesBefore(sys: TestSystem, prefixes: readonly string[]): Promise<void> {
  const { rows } = await sys.pool.query<NodeEventRow>(
    `SELECT position, tx_id::text AS tx, type, data FROM events WHERE type IN ('NodeCreated', 'NodeUpdated') ORDER BY position`,
  );
  const created = new Map(rows.filter((r) => r.type === 'NodeCreated').map((r) => [r.data.node_id, Number(r.position)]));
  for (const prefix of prefixes) {
    const carrying = rows.filter((r) => carries(r, prefix));
    expect(carrying.length, prefix).to.be.greaterThan(0);
    const block = rows.filter((r) => r.tx === carrying[0].tx);
    const at = Number(block[0].position);
    const blocked = new Set(block.map((r) => r.data.node_id));
    for (const [id, position] of created) {
      if (position < at) expect(blocked.has(id), `${id} created before the block of ${prefix}`).to.equal(true);
      else
        expect(
          carrying.some((r) => r.data.node_id === id),
          `${id} created after the block of ${prefix}`,
        ).to.equal(false);
    }
  }
}

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

    await expectBlocksOverNodesBefore(h.sys, prefixes);
    const mitigations = (await h.client.get('/admin/fleet/mitigations')).body.blocked_prefixes;
    expect(mitigations.map((m: { prefix: string }) => m.prefix)).to.deep.equal(prefixes);
  });

  it('a node created between two blocks carries the later block only', async () => {
    // The interleaving the concurrent case meets under load, in a fixed order.
    expectResponse(await h.client.post('/admin/fleet/mitigations/prefix-block', { prefix: '172.23.1.0/24' })).status(200);
    expectResponse(await h.client.post('/admin/nodes', node('n00', { router_id: '172.20.1.1' }))).status(201);
    expectResponse(await h.client.post('/admin/fleet/mitigations/prefix-block', { prefix: '172.23.2.0/24' })).status(200);

    await expectBlocksOverNodesBefore(h.sys, ['172.23.1.0/24', '172.23.2.0/24']);
    const mitigations = (await h.client.get('/admin/fleet/mitigations')).body.blocked_prefixes;
    expect(mitigations.map((m: { prefix: string; nodes: string[] }) => [m.prefix, m.nodes])).to.deep.equal([
      ['172.23.1.0/24', ['base']],
      ['172.23.2.0/24', ['base', 'n00']],
    ]);
  });
});
