import { expect } from 'chai';
import { labStatus } from '../../lab/lab.js';
import { firstHost, SPEC_STATE_DIR, useLab, withoutKernelWireguard } from './support.js';

/**
 * Scenarios 1 and 6 of issue 29: a fresh lab of 3 nodes and 1 portal peer
 * converges through what the control server published, and the data plane
 * follows the routes: every tunnel carries a ping by its link-local
 * addresses, and every loopback reaches every other across the fleet and the
 * peer. Once with kernel WireGuard (skipped, saying so, where the kernel has
 * no module) and once with `wireguard-go`, which always runs.
 */

for (const wireguard of ['kernel', 'userspace'] as const) {
  describe(`lab: convergence with ${wireguard} WireGuard (3 nodes, 1 portal peer)`, function () {
    this.timeout(120_000);
    const ctx = useLab({ nodes: 3, peers: 1, wireguard, skipWhen: wireguard === 'kernel' ? withoutKernelWireguard : undefined });

    it('brings every BGP session to Established and every prefix into every table', async () => {
      const seen = await ctx.lab.convergence();
      expect(seen.missing).to.deep.equal([]);
      // 2 iBGP sessions (IPv4, IPv6 loopbacks) per ordered pair of 3 nodes, and the portal session on both ends.
      expect(seen.sessions_total).to.equal(2 * 3 * 2 + 2);
      expect(seen.sessions_established).to.equal(seen.sessions_total);
      expect(seen.routes_ok).to.equal(true);
    });

    it('status prints the JSON line of up for the running lab', async () => {
      const status = await labStatus(SPEC_STATE_DIR);
      expect(status).to.include({ lab: 'up', nodes: 3, peers: 1, sessions_total: 14, sessions_established: 14, routes_ok: true, wireguard });
      expect(status.converge_s).to.be.a('number').above(0);
      expect(status.control_url).to.equal(ctx.lab.controlUrl);
      expect(status.console_url).to.equal(`${ctx.lab.controlUrl}/console/`);
      expect(status.portal_url).to.equal(`${ctx.lab.controlUrl}/portal/`);
      expect(status.problems).to.equal(undefined);
    });

    it(`reports ${wireguard} WireGuard in each agent's capabilities and per interface in its snapshot`, async () => {
      for (const n of ctx.lab.nodes) {
        const node = (await ctx.lab.admin.get(`/admin/nodes/${n.id}`)).body;
        expect(node.inventory.capabilities, n.id).to.include(`wireguard-${wireguard}`);
        const health = (await ctx.lab.admin.get(`/admin/nodes/${n.id}/health`)).body;
        expect(health.health, n.id).to.equal('ok');
        const interfaces = health.snapshot.wireguard_interfaces as { name: string; implementation: string }[];
        // Two internal links and, on the peer's node, the portal tunnel.
        expect(interfaces.length, n.id).to.equal(n.id === ctx.lab.peers[0].nodeId ? 3 : 2);
        for (const i of interfaces) expect(i.implementation, `${n.id} ${i.name}`).to.equal(wireguard);
      }
    });

    it('carries a ping over every tunnel between its link-local addresses', async () => {
      const { nodes, peers } = ctx.lab;
      for (const a of nodes)
        for (const b of nodes) {
          if (a === b) continue;
          // On node a the link to b is int-<b>, with fe80::<a>/64 on a's side.
          const ping = await ctx.lab.exec(a.id, ['ping', '-c', '1', '-W', '3', `fe80::${b.index}%int-${b.id}`]);
          expect(ping.code, `${a.id} -> ${b.id} over int-${b.id}: ${ping.stdout}${ping.stderr}`).to.equal(0);
        }
      const p = peers[0];
      const node = nodes.find((n) => n.id === p.nodeId)!;
      // The peer reaches its node's link-local (fe80::3998:<i>) over the portal tunnel, as its BGP session does.
      const ping = await ctx.lab.exec(p.name, ['ping', '-c', '1', '-W', '3', `fe80::3998:${node.index}%${p.interface}`]);
      expect(ping.code, `${p.name} -> ${node.id} over ${p.interface}: ${ping.stdout}${ping.stderr}`).to.equal(0);
    });

    it('carries a ping between every pair of loopbacks across the fleet and the peer, along the routes BIRD exported', async () => {
      const { nodes, peers } = ctx.lab;
      const hosts = [
        ...nodes.map((n) => ({ where: n.id, v4: n.loopbackIpv4, v6: n.loopbackIpv6 })),
        ...peers.map((p) => ({ where: p.name, v4: firstHost(p.ipv4Prefix), v6: firstHost(p.ipv6Prefix) })),
      ];
      for (const from of hosts)
        for (const to of hosts) {
          if (from === to) continue;
          for (const [src, dst] of [
            [from.v4, to.v4],
            [from.v6, to.v6],
          ]) {
            const ping = await ctx.lab.exec(from.where, ['ping', '-c', '1', '-W', '3', '-I', src, dst]);
            expect(ping.code, `${from.where} ${src} -> ${to.where} ${dst}: ${ping.stdout}${ping.stderr}`).to.equal(0);
          }
        }
      // The kernel's route to another node's prefix is BIRD's (proto bird), not a link route.
      const route = await ctx.lab.exec(nodes[0].id, ['ip', 'route', 'get', nodes[2].loopbackIpv4]);
      expect(route.stdout).to.match(new RegExp(`dev int-${nodes[2].id}`));
      const table = await ctx.lab.exec(nodes[0].id, ['ip', 'route', 'show', 'proto', 'bird']);
      expect(table.stdout).to.include(nodes[2].ipv4Prefix);
    });
  });
}
