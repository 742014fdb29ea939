import { expect } from 'chai';
import { evaluateFlapAlerts } from '../../../../commands/flap-alerts.js';
import type { Notifier } from '../../../../commands/notify/notifier.js';
import { api, expectResponse } from '../../../support/http.js';
import { givenPortalSession } from '../../../support/portal.js';
import { eventually } from '../../../support/wait.js';
import { TestSmtp } from '../../identity/verification-support.js';
import { snapshot, startAgents, type AgentHarness } from '../agent/telemetry-support.js';
import { NOTIFY_ENV, Receiver, startTestNotifier } from './support.js';

const AS_A = 4242420010;
const AS_B = 4242420077;
const BASE = '/autopeering/notifications';
const T0 = Date.parse('2026-11-01T12:00:00Z');

describe('Peer notifications in the portal API: own peerings only, confirmed addresses (issue 32)', function () {
  this.timeout(60_000);
  let h: AgentHarness;
  let smtp: TestSmtp;
  let receiver: Receiver;
  let notifier: Notifier;
  let peerA: ReturnType<typeof api>;
  let peerB: ReturnType<typeof api>;

  before(async () => {
    smtp = await new TestSmtp().start();
    receiver = await new Receiver().start();
    h = await startAgents(['n1'], { ...NOTIFY_ENV, SMTP_URL: smtp.url });
    h.sys.clock.current = new Date(T0);
    notifier = startTestNotifier(h.sys);
    peerA = api(`${h.url}/control/v1`, { token: await givenPortalSession(h.sys, { asn: AS_A, mnt: 'GAMMA-MNT' }) });
    peerB = api(`${h.url}/control/v1`, { token: await givenPortalSession(h.sys, { asn: AS_B, mnt: 'DELTA-MNT' }) });
  });
  after(async () => {
    await notifier?.stop();
    await h?.close();
    await receiver?.close();
    await smtp?.close();
  });

  /** n1's sessions: one with each peer, in the given states. */
  async function sessions(a: string, b: string) {
    const body = snapshot('n1', {}, { captured_at: h.sys.clock.now().toISOString() });
    body.bgp_protocols = [
      { name: 'peer_a', state: a, since: '2026-11-01T10:00:00Z', remote_asn: AS_A, routes_imported: 1, routes_exported: 1 },
      { name: 'peer_b', state: b, since: '2026-11-01T10:00:00Z', remote_asn: AS_B, routes_imported: 1, routes_exported: 1 },
    ];
    expectResponse(await h.agent.n1.post('/agent/runtime-snapshot', body)).status(200);
  }

  async function hook(peer: ReturnType<typeof api>, path: string): Promise<string> {
    const res = await peer.post(`${BASE}/channels`, { name: `mine ${path}`, type: 'webhook', url: `${receiver.url}${path}` });
    expectResponse(res).status(201);
    const id = res.body.channel.channel_id as string;
    expectResponse(
      await peer.post(`${BASE}/channels/${id}/subscriptions`, { kinds: ['session_down', 'flap_alert_opened'], down_after_s: 0, repeat_window_s: 0 }),
    ).status(201);
    return id;
  }
  const docs = (path: string) => receiver.on(path).map((r) => JSON.parse(r.body) as Record<string, any>);

  it('delivers each peer only the events of its own peerings, and hides other peers’ channels', async () => {
    const a = await hook(peerA, '/peer-a');
    const b = await hook(peerB, '/peer-b');
    // An operators' channel for everything sees both (and is not the peers' business).
    const ops = await h.admin.post('/admin/notifications/channels', { name: 'ops', type: 'webhook', url: `${receiver.url}/ops` });
    expectResponse(
      await h.admin.post(`/admin/notifications/channels/${ops.body.channel.channel_id}/subscriptions`, {
        kinds: ['session_down'],
        down_after_s: 0,
        repeat_window_s: 0,
      }),
    ).status(201);

    await sessions('established', 'established');
    await sessions('idle', 'established');
    const [mine] = await eventually(() => docs('/peer-a').length === 1 && docs('/peer-a'), { what: "A's session down" });
    expect(mine).to.include({ kind: 'session_down', peer_asn: AS_A, title: `Session peer_a on n1 (AS${AS_A}) is down` });
    // B's session goes down later: B's notification, and the operators' second one, are the barrier for A's channel.
    await sessions('idle', 'idle');
    await eventually(() => docs('/peer-b').length === 1 && docs('/ops').length === 2, { what: "B's session down" });
    expect(docs('/peer-b')[0]).to.include({ peer_asn: AS_B, title: `Session peer_b on n1 (AS${AS_B}) is down` });
    expect(docs('/peer-a')).to.have.length(1);
    expect(
      docs('/ops')
        .map((d) => d.peer_asn)
        .sort(),
    ).to.deep.equal([AS_A, AS_B]);

    // Channels: each peer lists its own; another's is unknown whatever the method.
    expect(((await peerA.get(`${BASE}/channels`)).body as { channel_id: string }[]).map((c) => c.channel_id)).to.deep.equal([a]);
    expect(((await peerB.get(`${BASE}/channels`)).body as { channel_id: string }[]).map((c) => c.channel_id)).to.deep.equal([b]);
    for (const [method, path] of [
      ['GET', `/channels/${b}`],
      ['GET', `/channels/${b}/deliveries`],
      ['POST', `/channels/${b}/test`],
      ['POST', `/channels/${b}/pause`],
      ['DELETE', `/channels/${b}`],
    ] as const)
      expectResponse(await peerA.send(method, `${BASE}${path}`))
        .status(404)
        .detail(`unknown notification channel ${b}`);
    // The operators' channels are not the peers' either, nor the peers' the admin list's.
    expectResponse(await peerA.get(`${BASE}/channels/${ops.body.channel.channel_id}`)).status(404);
    const adminList = (await h.admin.get('/admin/notifications/channels')).body as { channel_id: string }[];
    expect(adminList.map((c) => c.channel_id)).to.deep.equal([ops.body.channel.channel_id]);
    expect(((await peerB.get(`${BASE}/channels/${b}/deliveries`)).body as { title: string }[]).map((d) => d.title)).to.deep.equal([
      `Session peer_b on n1 (AS${AS_B}) is down`,
    ]);
  });

  it("tells each peer about flapping prefixes received from it, and nothing of another's", async () => {
    const report = async (prefix: string, peerAsn: number) => {
      const body = {
        node_id: 'n1',
        captured_at: h.sys.clock.now().toISOString(),
        feed_state: 'established',
        entries: [{ prefix, peer_asn: peerAsn, origin_asn: peerAsn, score: 150 }],
      };
      expectResponse(await h.agent.n1.post('/agent/prefix-flaps', body)).status(200);
      expect(await evaluateFlapAlerts(h.sys.context, h.sys.clock.now())).to.include({ opened: 1 });
    };
    const flaps = (path: string) => docs(path).filter((d) => d.kind === 'flap_alert_opened');
    await report('172.22.77.0/24', AS_B);
    const [theirs] = await eventually(() => flaps('/peer-b').length === 1 && flaps('/peer-b'), { what: "B's prefix alert" });
    expect(theirs).to.include({ peer_asn: AS_B, title: `Flap alert opened: prefix 172.22.77.0/24 from AS${AS_B}` });
    // A's own alert comes later: the barrier for A's channel.
    await report('172.22.10.0/24', AS_A);
    await eventually(() => flaps('/peer-a').length === 1, { what: "A's prefix alert" });
    expect(flaps('/peer-a').map((d) => d.title)).to.deep.equal([`Flap alert opened: prefix 172.22.10.0/24 from AS${AS_A}`]);
    expect(flaps('/peer-b')).to.have.length(1);
  });

  it('refuses kinds that are not about a peering, and asks for a session with a verified ASN', async () => {
    const res = await peerA.post(`${BASE}/channels`, { name: 'x', type: 'webhook', url: `${receiver.url}/x` });
    const id = res.body.channel.channel_id as string;
    expectResponse(await peerA.post(`${BASE}/channels/${id}/subscriptions`, { kinds: ['node_health'] }))
      .status(422)
      .detail('a peer can subscribe only to flap_alert_opened, flap_alert_cleared, session_down, peering_request (not node_health)');
    expectResponse(await api(`${h.url}/control/v1`).get(`${BASE}/channels`)).status(401);
    const noAsn = api(`${h.url}/control/v1`, { token: await givenPortalSession(h.sys, { asn: null }) });
    expectResponse(await noAsn.get(`${BASE}/channels`)).status(403);
    expectResponse(await peerA.delete(`${BASE}/channels/${id}`)).status(204);
  });

  it('mails a code to a peer’s address and sends nothing else there until the code comes back', async () => {
    const address = 'noc@gamma.example';
    const res = await peerA.post(`${BASE}/channels`, { name: 'mail', type: 'email', address });
    expectResponse(res).status(201);
    const id = res.body.channel.channel_id as string;
    expect(res.body.channel).to.include({ confirmed: false });
    const [codeMail] = await eventually(() => smtp.to(address).length === 1 && smtp.to(address), { what: 'the code' });
    const code = /Your confirmation code: (\d{6})/.exec(codeMail.raw)![1];
    const test = await peerA.post(`${BASE}/channels/${id}/test`);
    expectResponse(test).status(202);
    const wrong = code === '000000' ? '111111' : '000000';
    expectResponse(await peerA.post(`${BASE}/channels/${id}/confirm`, { code: wrong }))
      .status(422)
      .detail('wrong confirmation code');
    expectResponse(await peerB.post(`${BASE}/channels/${id}/confirm`, { code })).status(404);
    // Unconfirmed, the test waits (it is the first notification the address gets after its code).
    const waiting = (await peerA.get(`${BASE}/channels/${id}/deliveries`)).body as { notification_id: string; status: string }[];
    expect(waiting.find((d) => d.notification_id === test.body.notification_id)?.status).to.equal('queued');
    expect(smtp.to(address)).to.have.length(1);
    const confirmed = await peerA.post(`${BASE}/channels/${id}/confirm`, { code });
    expectResponse(confirmed).status(200);
    expect(confirmed.body).to.include({ confirmed: true });
    await eventually(() => smtp.to(address).length === 2, { what: 'the test mail after confirmation' });
    expect(smtp.to(address)[1].raw).to.match(/Test notification for mail/);
    expectResponse(await peerA.post(`${BASE}/channels/${id}/confirm`, { code })).status(409);
  });
});
