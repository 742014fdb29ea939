import { expect } from 'chai';
import { eventually } from '../support/wait.js';
import { useLab } from './support.js';

/**
 * Scenario 2 of issue 29: a peer network sets its peering up end to end the
 * way a dn42 operator does. `useLab` has it log in to the portal through real
 * ASN verification (an `ssh-keygen -Y sign` signature with the sample
 * registry's demo key), request a peering with n1 (accepted by the node's
 * autopeering policy) and apply only what the portal gave it: the wg-quick
 * file and the BIRD snippet, run for real in its namespace. Here the portal's
 * own views of that peering show what the routers see.
 */

describe('lab: a portal peer end to end (2 nodes, 1 portal peer)', function () {
  this.timeout(120_000);
  const ctx = useLab({ nodes: 2, peers: 1 });

  const peer = () => ctx.lab.peers[0];
  const portal = () => ctx.lab.portal(peer().name);

  it("the peer's own BIRD has the portal's session Established with every fleet prefix, from the snippet as given", async () => {
    const protocols = await ctx.lab.birdc(peer().name, 'show', 'protocols');
    expect(peer().protocols).to.have.length(1);
    expect(protocols).to.match(new RegExp(`${peer().protocols[0]}\\s+BGP\\s+\\S+\\s+up\\s+.*Established`));
    const routes = await ctx.lab.birdc(peer().name, 'show', 'route');
    for (const n of ctx.lab.nodes) expect(routes).to.include(n.ipv4Prefix).and.to.include(n.ipv6Prefix);
  });

  it('the request was provisioned by policy and is listed under the peer ASN only', async () => {
    const list = await portal().get('/autopeering/requests');
    expect(list.status).to.equal(200);
    const rows = (list.body.requests ?? list.body) as { id: number; node_id: string; asn?: number; status?: string }[];
    const mine = rows.find((r) => r.id === peer().requestId);
    expect(mine, JSON.stringify(rows)).to.include({ node_id: peer().nodeId });
    const detail = (await portal().get(`/autopeering/requests/${peer().requestId}`)).body;
    expect(detail.provision.node_asn).to.equal(ctx.lab.nodes[0].asn);
    expect(detail.provision.node_public_key).to.be.a('string');
  });

  it("the request detail's live state shows the Established session, its routes and the WireGuard handshake", async () => {
    // The node's snapshots carry the session state; ask for one so the view need not wait for the next.
    await ctx.lab.admin.post(`/admin/nodes/${peer().nodeId}/notify`, { event: 'snapshot_request', reason: 'lab spec: portal live state' });
    const live = await eventually(
      async () => {
        const detail = (await portal().get(`/autopeering/requests/${peer().requestId}`)).body;
        expect(detail.live?.bgp_state).to.equal('established');
        expect(detail.live.routes.ipv4?.imported).to.be.at.least(1);
        expect(detail.live.routes.ipv6?.imported).to.be.at.least(1);
        return detail.live;
      },
      { timeoutMs: 60_000, everyMs: 1000, what: 'the portal detail shows the session Established with routes' },
    );
    expect(live.bgp_health).to.equal('up');
    expect(live.established_seconds).to.be.a('number').at.least(0);
    expect(live.wireguard.latest_handshake_at).to.be.a('string');
    expect(live.wireguard.rx_bytes).to.be.above(0);
    // The node exports the fleet's prefixes to the peer: 2 nodes, one per family each.
    expect(live.routes.ipv4.exported).to.be.at.least(2);
    expect(live.routes.ipv6.exported).to.be.at.least(2);
  });

  it("the routes view lists the peer's own prefixes as the node learnt them, per family", async () => {
    for (const [family, prefix] of [
      ['4', peer().ipv4Prefix],
      ['6', peer().ipv6Prefix],
    ] as const) {
      const routes = await eventually(
        async () => {
          const answer = (await portal().get(`/autopeering/requests/${peer().requestId}/routes?family=${family}`)).body;
          expect(answer.routes.map((r: { prefix: string }) => r.prefix)).to.include(prefix);
          return answer;
        },
        { timeoutMs: 90_000, everyMs: 2000, what: `the routes view (family ${family}) lists ${prefix}` },
      );
      const route = routes.routes.find((r: { prefix: string }) => r.prefix === prefix);
      expect(route.origin_asn).to.equal(peer().asn);
      expect(route.as_path).to.deep.equal([peer().asn]);
    }
  });

  it('the latency and MTU probes run from the node over the tunnel and answer', async () => {
    const latency = await portal().post(`/autopeering/requests/${peer().requestId}/probe-latency`, {});
    expect(latency.status, latency.text).to.equal(200);
    expect(latency.body.loss_pct).to.equal(0);
    expect(latency.body.rtt_ms_avg).to.be.a('number').above(0);
    const mtu = await eventually(
      async () => {
        const answer = await portal().post(`/autopeering/requests/${peer().requestId}/probe-mtu`, {});
        // The automatic probe after creation may still hold the cooldown: wait it out.
        expect(answer.status, answer.text).to.equal(200);
        return answer.body;
      },
      { timeoutMs: 90_000, everyMs: 3000, what: 'an MTU probe answer' },
    );
    expect(mtu.status).to.equal('ok');
    expect(mtu.mtu).to.equal(1420);
  });
});
