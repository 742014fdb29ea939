import { expect } from 'chai';
import { networks } from '../../lab/converge.js';
import { eventually } from '../support/wait.js';
import { useLab } from './support.js';

/**
 * Scenario 4 of issue 29: a fleet-wide prefix block through the mitigation
 * API. The block reaches every node by doorbell and its rendered BIRD; the
 * peer's prefix leaves every node's table (rejected on the eBGP import of the
 * node that peers with it, so no node learns it over iBGP either) within a
 * bound, while its other prefix (exact match only) stays. Unblocking brings
 * it back everywhere. The seconds each took are printed for the figures.
 */

const BOUND_MS = 60_000;

describe('lab: a fleet-wide prefix block (3 nodes, 1 portal peer)', function () {
  this.timeout(180_000);
  const ctx = useLab({ nodes: 3, peers: 1 });

  const tables = async () => Promise.all(ctx.lab.nodes.map(async (n) => ({ id: n.id, routes: (await networks(n.birdSocket)) ?? new Set<string>() })));

  it('takes the blocked prefix out of every node table and brings it back on unblock', async () => {
    const peer = ctx.lab.peers[0];
    const blocked = peer.ipv4Prefix;
    for (const t of await tables()) expect([...t.routes], t.id).to.include(blocked);

    const started = Date.now();
    const block = await ctx.lab.admin.post('/admin/fleet/mitigations/prefix-block', { prefix: blocked });
    expect(block.status, block.text).to.equal(200);
    expect(block.body.prefix).to.equal(blocked);
    expect([...block.body.nodes].sort()).to.deep.equal(ctx.lab.nodes.map((n) => n.id).sort());
    expect(Object.keys(block.body.changed).sort()).to.deep.equal(ctx.lab.nodes.map((n) => n.id).sort());
    await eventually(
      async () => {
        for (const t of await tables()) expect([...t.routes], t.id).not.to.include(blocked);
        return true;
      },
      { timeoutMs: BOUND_MS, everyMs: 250, what: `${blocked} gone from every node's BIRD table` },
    );
    const blockS = (Date.now() - started) / 1000;
    // Exact match only: the peer's other prefix and the peer's session are untouched.
    for (const t of await tables()) expect([...t.routes], t.id).to.include(peer.ipv6Prefix);
    const node = ctx.lab.nodes.find((n) => n.id === peer.nodeId)!;
    const config = await ctx.lab.exec(node.id, ['sh', '-c', `grep -rh --include=*.conf -- '${blocked}' ${node.agentStateDir} || true`]);
    expect(config.stdout, "the node's rendered BIRD names the blocked prefix").to.include(blocked);
    expect((await ctx.lab.convergence()).sessions_established).to.equal(2 * 3 * 2 + 2);
    // The data plane follows: the node has no kernel route to the blocked prefix.
    const route = await ctx.lab.exec(node.id, ['ip', 'route', 'show', blocked]);
    expect(route.stdout.trim()).to.equal('');

    const unblockedAt = Date.now();
    const unblock = await ctx.lab.admin.post('/admin/fleet/mitigations/prefix-unblock', { prefix: blocked });
    expect(unblock.status, unblock.text).to.equal(200);
    expect(unblock.body.nodes).to.deep.equal([]);
    await eventually(
      async () => {
        for (const t of await tables()) expect([...t.routes], t.id).to.include(blocked);
        return true;
      },
      { timeoutMs: BOUND_MS, everyMs: 250, what: `${blocked} back in every node's BIRD table` },
    );
    const unblockS = (Date.now() - unblockedAt) / 1000;
    console.log(`      figures: fleet-wide block of ${blocked} left every table in ${blockS.toFixed(1)} s; unblock restored it in ${unblockS.toFixed(1)} s`);
  });
});
