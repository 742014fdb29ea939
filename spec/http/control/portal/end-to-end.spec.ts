import { expect } from 'chai';
import { createControlApp } from '../../../../http/control/app.js';
import { registerLocalPortalClient } from '../../../../http/control/portal/local-client.js';
import { issueAgentToken } from '../../../support/agents.js';
import { agentSocket, type AgentClient } from '../../../support/agent-socket.js';
import { api, expectResponse } from '../../../support/http.js';
import { GAMMA_ASN, GAMMA_MNT, sshSession, startOidc, type OidcFixture } from '../../../support/oidc.js';
import { portalLogin } from '../../../support/portal-login.js';
import { freePort } from '../../../support/ports.js';
import { rpsl } from '../../../support/registry.js';
import { startApp } from '../../../support/system.js';
import { snapshot } from '../agent/telemetry-support.js';
import { node } from '../fleet/support.js';

const ADMIN_TOKEN = 'portal-end-to-end-admin-token-0123456789';
const KEY = 'wQzQn6qN5m0y0VZ8mY0aQkqf1mN0s2m0oQv0a8m0aE0=';
const NODES = ['fra1', 'ams1', 'ber1'] as const;
/** The WireGuard public key each node's agent registers. */
const NODE_KEYS: Record<string, string> = {
  fra1: 'aQzQn6qN5m0y0VZ8mY0aQkqf1mN0s2m0oQv0a8m0aE0=',
  ams1: 'bQzQn6qN5m0y0VZ8mY0aQkqf1mN0s2m0oQv0a8m0aE0=',
  ber1: 'cQzQn6qN5m0y0VZ8mY0aQkqf1mN0s2m0oQv0a8m0aE0=',
};

type Client = ReturnType<typeof api>;

/**
 * The acceptance test of the autopeering portal, over HTTP only: a dn42
 * operator logs in through the real identity service (the authorization page's
 * API, an SSH signature made by `ssh-keygen -Y sign`, approve, callback, handoff
 * exchange), creates a request in each of the three session forms on a node an
 * administrator opened, and watches what an agent of that node sees: the new
 * desired state, the doorbell on its socket; the agent reports the session
 * Established and the request's `live` shows it; the request is deleted and
 * created again on the same port.
 */
describe('Portal end to end: log in through the identity service, peer in one request, watch the session live', function () {
  this.timeout(120_000);
  let f: OidcFixture;
  let control: { url: string; close(): Promise<void> };
  let admin: Client;
  let portal: Client;
  let token: string;
  const agents: Record<string, { http: Client; socket: AgentClient }> = {};

  before(async function () {
    this.timeout(120_000);
    const controlPort = await freePort();
    f = await startOidc({ CONTROL_URL: `http://127.0.0.1:${controlPort}`, ADMIN_TOKEN });
    for (const [kind, prefix] of [
      ['route', '172.20.42.0/27'],
      ['route6', 'fd42:4242:10::/48'],
    ]) {
      f.repo.put(
        kind,
        prefix,
        rpsl([
          [kind, prefix],
          ['origin', `AS${GAMMA_ASN}`],
          ['mnt-by', GAMMA_MNT],
          ['source', 'DN42'],
        ]),
      );
    }
    await f.sync();
    // `npm start` wiring: the portal registers itself with the identity service in the same process.
    const local = await registerLocalPortalClient(f.sys.context);
    control = await startApp(createControlApp(f.sys.context, { portal: { localClient: local } }), controlPort);
    admin = api(`${control.url}/control/v1`, { token: ADMIN_TOKEN });
    portal = api(`${control.url}/control/v1`);

    // The administrator opens three nodes for autopeering; an agent of each registers its WireGuard key and connects.
    for (const [i, id] of NODES.entries()) {
      expectResponse(await admin.post('/admin/nodes', node(id, { router_id: `172.20.0.${i + 1}` }))).status(201);
      expectResponse(await admin.put(`/admin/autopeering/nodes/${id}`, { enabled: true, endpoint_host: `${id}.example.net`, max_sessions: 5 })).status(200);
      const agentToken = (await issueAgentToken(control.url, ADMIN_TOKEN, id)).token;
      const http = api(`${control.url}/control/v1`, { token: agentToken });
      expectResponse(await http.post('/agent/wireguard-keys', { node_id: id, public_key: NODE_KEYS[id] })).status(200);
      const socket = agentSocket(control.url, `ws/${id}`, agentToken);
      await socket.next('hello');
      agents[id] = { http, socket };
    }
  });
  after(async () => {
    for (const { socket } of Object.values(agents)) await socket.close();
    await control?.close();
    await f?.done();
  });

  const offer = async (id: string) =>
    ((await portal.get('/autopeering/nodes', { token })).body.nodes as Record<string, unknown>[]).find((n) => n.node_id === id);

  it('logs the operator in through the identity service with an SSH signature', async () => {
    const identitySession = (await sshSession(f)).token;
    const session = await portalLogin(f, control.url, api(control.url), () => identitySession).loggedIn();
    token = session.token;
    expect(session.body.profile).to.deep.include({ asn: GAMMA_ASN, mntner: GAMMA_MNT, route: ['172.20.42.0/27'], route6: ['fd42:4242:10::/48'] });
    expectResponse(await portal.get('/autopeering/me', { token }))
      .status(200)
      .body({ profile: session.body.profile });
    const offers = (await portal.get('/autopeering/nodes', { token })).body.nodes;
    expect(offers.map((n: { node_id: string }) => n.node_id)).to.deep.equal(['ams1', 'ber1', 'fra1']);
    for (const id of NODES)
      expect(await offer(id)).to.deep.include({ endpoint_host: `${id}.example.net`, used_ports: 0, remaining: 5, provisioned: 0, max_sessions: 5 });
  });

  const forms = [
    { node: 'fra1', form: 'link-local-mp', body: {}, sessions: [`autopeer_${GAMMA_ASN}`] },
    { node: 'ams1', form: 'ula-mp', body: { session_addressing: 'ipv6-ula', peer_ipv6: 'fd42:4242:10::2' }, sessions: [`autopeer_${GAMMA_ASN}`] },
    {
      node: 'ber1',
      form: 'dual-plain',
      body: { mp_bgp: false, peer_ipv4: '172.20.42.2', peer_ipv6: 'fd42:4242:10::2' },
      sessions: [`autopeer_${GAMMA_ASN}_v4`, `autopeer_${GAMMA_ASN}_v6`],
    },
  ] as const;

  for (const { node: id, form, body, sessions } of forms) {
    it(`${form} on ${id}: created, in the agent's desired state, rung; Established in live after a snapshot; deleted and created again on the same port`, async () => {
      const agent = agents[id];
      const created = await portal.post('/autopeering/requests', { node_id: id, public_key: KEY, endpoint: 'peer.example.net:51820', ...body }, { token });
      expectResponse(created).status(201);
      expect(created.body).to.deep.include({
        node_id: id,
        asn: GAMMA_ASN,
        status: 'provisioned',
        form,
        session_names: sessions,
        interface_name: `dn42_${GAMMA_ASN}`,
      });
      const port = created.body.listen_port as number;
      expect(created.body.provision).to.deep.equal({
        endpoint: `${id}.example.net:${port}`,
        node_public_key: NODE_KEYS[id],
        node_link_local: 'fe80::1',
        node_asn: 4242420001,
        mtu: 1420,
        node_ipv4: form === 'dual-plain' ? '172.20.0.1' : null,
        node_ipv6: form === 'link-local-mp' ? null : 'fd42:4242:1::1',
      });

      // The agent: the doorbell names the new generation, and its desired state holds the peering.
      expect(await agent.socket.next('desired_state_updated')).to.deep.include({ generation: created.body.generation });
      const desired = await agent.http.get('/agent/desired-state');
      expectResponse(desired).status(200);
      expect(desired.body.generation).to.equal(created.body.generation);
      const iface = desired.body.state.interfaces.find((i: { name: string }) => i.name === `dn42_${GAMMA_ASN}`);
      expect(iface).to.deep.include({ listen_port: port, mtu: 1420, scope: 'external' });
      expect(iface.peer).to.deep.include({ public_key: KEY, endpoint: 'peer.example.net:51820' });
      expect(
        desired.body.state.bgp_sessions.filter((s: { remote_asn: number }) => s.remote_asn === GAMMA_ASN).map((s: { name: string }) => s.name),
      ).to.deep.equal(sessions);
      expect(await offer(id)).to.deep.include({ used_ports: 1, remaining: 4, provisioned: 1 });

      // Before the agent reports, nothing is live.
      const detailUrl = `/autopeering/requests/${created.body.id}`;
      expectResponse(await portal.get(detailUrl, { token }))
        .status(200)
        .body({ live: null });

      // The agent reports the session Established an hour ago.
      const now = f.sys.clock.now();
      const since = new Date(now.getTime() - 3600_000).toISOString();
      const snap = snapshot(
        id,
        {},
        {
          generation: created.body.generation,
          captured_at: now.toISOString(),
          // Two plain sessions: one family each. A multiprotocol session: both families, counted per channel.
          bgp_protocols: sessions.map((name) => ({
            name,
            state: 'established',
            since,
            remote_asn: GAMMA_ASN,
            routes_imported: 12,
            routes_exported: 34,
            ...(sessions.length === 1 ? { routes_imported_v4: 5, routes_exported_v4: 30, routes_imported_v6: 7, routes_exported_v6: 4 } : {}),
          })),
          wireguard_interfaces: [
            {
              name: `dn42_${GAMMA_ASN}`,
              listen_port: port,
              peers: [{ public_key: KEY, latest_handshake_at: now.toISOString(), rx_bytes: 4096, tx_bytes: 8192 }],
            },
          ],
        },
      );
      expectResponse(await agent.http.post('/agent/runtime-snapshot', snap)).status(200);
      const detail = await portal.get(detailUrl, { token });
      expectResponse(detail).status(200);
      const live = detail.body.live;
      expect(live).to.deep.include({ bgp_state: 'established', bgp_health: 'up', since, established_seconds: 3600 });
      expect(new Date(live.observed_at).getTime()).to.equal(now.getTime());
      expect(live.wireguard).to.deep.equal({ latest_handshake_at: now.toISOString(), rx_bytes: 4096, tx_bytes: 8192 });
      if (sessions.length === 2) {
        expect(live.routes).to.deep.equal({ ipv4: { imported: 12, exported: 34 }, ipv6: { imported: 12, exported: 34 } });
        expect(live.sessions.map((s: { name: string; bgp_health: string }) => [s.name, s.bgp_health])).to.deep.equal(sessions.map((n) => [n, 'up']));
      } else {
        expect(live.routes).to.deep.equal({ ipv4: { imported: 5, exported: 30 }, ipv6: { imported: 7, exported: 4 } });
        expect(live.sessions).to.equal(null);
      }
      const listed = (await portal.get('/autopeering/requests', { token })).body.requests.find((r: { id: number }) => r.id === created.body.id);
      expect(listed).to.deep.include({ status: 'provisioned', listen_port: port });

      // Deleted: the peering leaves the agent's desired state, the agent is rung, the seat is free.
      const deleted = await portal.delete(detailUrl, { token });
      expectResponse(deleted).status(200).body({ status: 'cancelled', cancelled_by: 'requester' });
      const removal = await agent.socket.next('desired_state_updated');
      const after = (await agent.http.get('/agent/desired-state')).body;
      expect(after.generation).to.equal(removal.generation);
      expect(after.state.interfaces.map((i: { name: string }) => i.name)).to.not.include(`dn42_${GAMMA_ASN}`);
      expect(after.state.bgp_sessions.filter((s: { remote_asn: number }) => s.remote_asn === GAMMA_ASN)).to.deep.equal([]);
      expect(await offer(id)).to.deep.include({ used_ports: 0, remaining: 5, provisioned: 0 });

      // Created again a second later: the same port, a new request, rung again; the snapshot of the deleted one is not its live state.
      f.sys.clock.advance(1000);
      const again = await portal.post('/autopeering/requests', { node_id: id, public_key: KEY, endpoint: 'peer.example.net:51820', ...body }, { token });
      expectResponse(again).status(201).body({ listen_port: port, status: 'provisioned', form });
      expect(again.body.id).to.not.equal(created.body.id);
      expect(await agent.socket.next('desired_state_updated')).to.deep.include({ generation: again.body.generation });
      expectResponse(await portal.get(`/autopeering/requests/${again.body.id}`, { token }))
        .status(200)
        .body({ live: null });
      expect(await offer(id)).to.deep.include({ used_ports: 1, remaining: 4, provisioned: 1 });
    });
  }

  it('lists the three provisioned requests and the cancelled ones of the login AS', async () => {
    const rows = (await portal.get('/autopeering/requests', { token })).body.requests as { node_id: string; status: string }[];
    expect(
      rows
        .filter((r) => r.status === 'provisioned')
        .map((r) => r.node_id)
        .sort(),
    ).to.deep.equal(['ams1', 'ber1', 'fra1']);
    expect(rows.filter((r) => r.status === 'cancelled')).to.have.length(3);
  });

  it('takes a double submit once: one 201, one 409, one peering in the agent desired state', async () => {
    const [fra] = ((await portal.get('/autopeering/requests', { token })).body.requests as { id: number; node_id: string; status: string }[]).filter(
      (r) => r.node_id === 'fra1' && r.status === 'provisioned',
    );
    expectResponse(await portal.delete(`/autopeering/requests/${fra.id}`, { token })).status(200);
    const results = await Promise.all([1, 2].map(() => portal.post('/autopeering/requests', { node_id: 'fra1', public_key: KEY }, { token })));
    expect(results.map((r) => r.status).sort()).to.deep.equal([201, 409]);
    const created = results.find((r) => r.status === 201)!;
    const { state, generation } = (await agents.fra1.http.get('/agent/desired-state')).body;
    expect(generation).to.equal(created.body.generation);
    expect(state.interfaces.filter((i: { name: string }) => i.name === `dn42_${GAMMA_ASN}`)).to.have.length(1);
    expect(await offer('fra1')).to.deep.include({ used_ports: 1, provisioned: 1 });
  });
});
