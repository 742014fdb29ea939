import { expect } from 'chai';
import type { Notifier } from '../../../../commands/notify/notifier.js';
import { postWebhook, RefusedTarget } from '../../../../infra/notify/webhook.js';
import { expectResponse } from '../../../support/http.js';
import { parsePrometheus, samplesOf } from '../../../support/prometheus.js';
import { barrier, eventually } from '../../../support/wait.js';
import { startAgents, type AgentHarness } from '../agent/telemetry-support.js';
import { NOTIFY_ENV, Receiver, startTestNotifier, verifySignature, wallClock } from './support.js';

const BASE = '/admin/notifications';

describe('Notification channels: webhooks with signatures, retries, pausing and SSRF refusals (issue 32)', function () {
  this.timeout(60_000);
  let h: AgentHarness;
  let receiver: Receiver;
  let notifier: Notifier;

  before(async () => {
    receiver = await new Receiver().start();
    h = await startAgents([], NOTIFY_ENV);
    // Backoff and leases are wall-clock times here.
    wallClock(h.sys);
    notifier = startTestNotifier(h.sys);
  });
  after(async () => {
    await notifier?.stop();
    await h?.close();
    await receiver?.close();
  });

  async function webhook(path: string, payload: 'json' | 'text' = 'json') {
    const res = await h.admin.post(`${BASE}/channels`, { name: `hook ${path}`, type: 'webhook', url: `${receiver.url}${path}`, payload });
    expectResponse(res).status(201);
    return res.body as { channel: { channel_id: string }; secret: string };
  }

  const channel = async (id: string) => (await h.admin.get(`${BASE}/channels/${id}`)).body;
  const deliveries = async (id: string) => (await h.admin.get(`${BASE}/channels/${id}/deliveries`)).body as Record<string, any>[];

  it('delivers a test notification signed over timestamp.body, with an idempotency key, and logs it as delivered', async () => {
    const { channel: ch, secret } = await webhook('/signed');
    expect(secret).to.match(/^whsec_/);
    const listed = (await h.admin.get(`${BASE}/channels`)).body as Record<string, unknown>[];
    expect(JSON.stringify(listed)).to.not.include(secret);
    const test = await h.admin.post(`${BASE}/channels/${ch.channel_id}/test`);
    expectResponse(test).status(202);
    const [got] = await eventually(() => receiver.on('/signed').length === 1 && receiver.on('/signed'), { what: 'the test notification', timeoutMs: 15_000 });
    expect(got.headers['idempotency-key']).to.equal(test.body.notification_id);
    expect(verifySignature(secret, got), 'signature verifies with the secret').to.equal(true);
    expect(verifySignature('whsec_wrong', got)).to.equal(false);
    expect(Math.abs(Number(got.headers['x-dn42-timestamp']) - Date.now() / 1000)).to.be.below(60);
    const doc = JSON.parse(got.body);
    expect(doc).to.include({ id: test.body.notification_id, kind: 'test', severity: 'info' });
    const [row] = await eventually(async () => {
      const log = await deliveries(ch.channel_id);
      return log[0]?.status === 'delivered' && log;
    });
    expect(row).to.include({ notification_id: test.body.notification_id, attempts: 1, last_status: 204, last_error: null });
    expect((await channel(ch.channel_id)).last_success_at).to.be.a('string');
  });

  it('sends the text form Slack, Mattermost and Discord accept', async () => {
    const { channel: ch } = await webhook('/chat', 'text');
    expectResponse(await h.admin.post(`${BASE}/channels/${ch.channel_id}/test`)).status(202);
    const [got] = await eventually(() => receiver.on('/chat').length === 1 && receiver.on('/chat'));
    const body = JSON.parse(got.body);
    expect(body.text).to.match(/^\[info\] Test notification for hook \/chat\n/);
    expect(body.content).to.equal(body.text);
  });

  it('retries a receiver that answers 500 and then recovers, with the same idempotency key', async () => {
    const { channel: ch } = await webhook('/flaky');
    let failures = 2;
    const before = receiver.respond;
    receiver.respond = (r, res) => {
      if (r.path === '/flaky' && failures-- > 0) res.writeHead(500).end('down for maintenance');
      else before(r, res);
    };
    expectResponse(await h.admin.post(`${BASE}/channels/${ch.channel_id}/test`)).status(202);
    const log = await eventually(
      async () => {
        const rows = await deliveries(ch.channel_id);
        return rows[0]?.status === 'delivered' && rows;
      },
      { timeoutMs: 10_000, what: 'delivery after two 500s' },
    );
    expect(log[0]).to.include({ attempts: 3, last_status: 204 });
    const got = receiver.on('/flaky');
    expect(got).to.have.length(3);
    expect(new Set(got.map((r) => r.headers['idempotency-key'])).size).to.equal(1);
    // Between the attempts: backoff (base 100 ms, doubled, ±20 %): at least 80 ms, then at least 160 ms.
    expect(got[1].at - got[0].at).to.be.at.least(75);
    expect(got[2].at - got[1].at).to.be.at.least(155);
    receiver.respond = before;
  });

  it('pauses a channel after repeated failures, keeps its notifications queued, and delivers them when resumed', async () => {
    const { channel: ch } = await webhook('/broken');
    let broken = true;
    const before = receiver.respond;
    receiver.respond = (r, res) => (r.path === '/broken' && broken ? res.writeHead(503).end('nope') : before(r, res));
    // Test sends do not count towards pausing; real notifications do: queue three through a subscription-free path.
    const { enqueue } = await import('../../../../infra/notify/outbox.js');
    for (let i = 0; i < 3; i++)
      await enqueue(h.sys.pool, {
        channel_id: ch.channel_id,
        subscription_id: null,
        signal: {
          id: `pause-${i}`,
          kind: 'node_health',
          severity: 'warning',
          node_id: 'n1',
          nodes: ['n1'],
          peer_asn: null,
          group: `g${i}`,
          title: `t${i}`,
          lines: [],
          at: new Date().toISOString(),
          facts: {},
        },
        not_before: new Date(),
        cancel_key: null,
        repeat_window_s: 0,
        flood_limit: 100,
      });
    const paused = await eventually(
      async () => {
        const c = await channel(ch.channel_id);
        return c.paused && c;
      },
      { timeoutMs: 10_000, what: 'the channel paused' },
    );
    expect(paused).to.include({ pause_automatic: true, consecutive_failures: 3 });
    expect(paused.pause_reason).to.match(/3 consecutive failed deliveries; last: HTTP 503: nope/);
    expect(paused.last_error).to.equal('HTTP 503: nope');
    // The metrics show it: one paused channel, three notifications waiting for a retry.
    const metrics = parsePrometheus(await (await fetch(`${h.url}/metrics`)).text());
    expect(Number(samplesOf(metrics, 'dn42_notification_channels_paused')[0].value)).to.equal(1);
    expect(Number(samplesOf(metrics, 'dn42_notifications', { status: 'attempted' })[0].value)).to.equal(3);
    broken = false;
    // While paused, a test send still goes out (barrier: it is delivered, and the three waiting ones were not tried again).
    const tried = receiver.on('/broken').length;
    const test = await h.admin.post(`${BASE}/channels/${ch.channel_id}/test`);
    await barrier(
      () => test,
      async () => (await deliveries(ch.channel_id)).find((d) => d.notification_id === test.body.notification_id)?.status === 'delivered',
    );
    expect(receiver.on('/broken').length).to.equal(tried + 1);
    expect((await channel(ch.channel_id)).queued).to.equal(3);
    const resumed = await h.admin.post(`${BASE}/channels/${ch.channel_id}/resume`);
    expectResponse(resumed).status(200);
    expect(resumed.body).to.include({ paused: false, consecutive_failures: 0 });
    await eventually(async () => (await channel(ch.channel_id)).queued === 0, { timeoutMs: 10_000, what: 'the waiting notifications delivered' });
    expect((await deliveries(ch.channel_id)).filter((d) => d.status === 'delivered')).to.have.length(4);
    receiver.respond = before;
  });

  it('does not follow a redirect: the attempt fails with the 3xx and the target is never asked', async () => {
    const { channel: ch } = await webhook('/moved');
    const before = receiver.respond;
    receiver.respond = (r, res) => (r.path === '/moved' ? res.writeHead(302, { location: `${receiver.url}/target` }).end() : before(r, res));
    expectResponse(await h.admin.post(`${BASE}/channels/${ch.channel_id}/test`)).status(202);
    // The attempt is recorded after the whole exchange: had the redirect been followed, /target would have been asked first.
    const [row] = await eventually(async () => {
      const log = await deliveries(ch.channel_id);
      return log[0]?.attempts >= 1 && log;
    });
    expect(row).to.include({ status: 'attempted', last_status: 302, last_error: 'HTTP 302: redirect not followed' });
    expect(receiver.on('/target')).to.have.length(0);
    receiver.respond = before;
    expectResponse(await h.admin.delete(`${BASE}/channels/${ch.channel_id}`)).status(204);
  });

  it('prunes notifications finished 30 days ago, with their attempts, and keeps waiting ones', async () => {
    const { channel: ch } = await webhook('/prune');
    const test = await h.admin.post(`${BASE}/channels/${ch.channel_id}/test`);
    await eventually(async () => (await deliveries(ch.channel_id))[0]?.status === 'delivered');
    const { enqueue, pruneOutbox } = await import('../../../../infra/notify/outbox.js');
    await h.admin.post(`${BASE}/channels/${ch.channel_id}/pause`);
    const old = new Date(Date.now() - 40 * 86_400_000);
    await enqueue(h.sys.pool, {
      channel_id: ch.channel_id,
      subscription_id: null,
      signal: {
        id: 'old-waiting',
        kind: 'node_health',
        severity: 'info',
        node_id: null,
        nodes: [],
        peer_asn: null,
        group: 'old',
        title: 'old and waiting',
        lines: [],
        at: old.toISOString(),
        facts: {},
      },
      not_before: old,
      cancel_key: null,
      repeat_window_s: 0,
      flood_limit: 100,
    });
    expect(await pruneOutbox(h.sys.pool, new Date(Date.now() + 31 * 86_400_000))).to.be.at.least(1);
    const left = await deliveries(ch.channel_id);
    expect(left.map((d) => d.title)).to.deep.equal(['old and waiting']);
    expect((await h.sys.pool.query(`SELECT count(*)::int AS n FROM notify_attempts WHERE outbox_id = $1`, [test.body.notification_id])).rows[0].n).to.equal(0);
    expectResponse(await h.admin.delete(`${BASE}/channels/${ch.channel_id}`)).status(204);
  });

  it('answers bad input with 4xx problem details', async () => {
    expectResponse(await h.admin.post(`${BASE}/channels`, { name: 'x', type: 'webhook' })).status(422);
    expectResponse(await h.admin.post(`${BASE}/channels`, { name: 'x', type: 'webhook', url: 'ftp://example.net/' }))
      .status(422)
      .detail('url must use http: or https:');
    expectResponse(await h.admin.post(`${BASE}/channels`, { name: 'x', type: 'email', address: 'ops@example.net' }))
      .status(422)
      .detail(/SMTP_URL is not set/);
    expectResponse(await h.admin.post(`${BASE}/channels`, { name: 'x', type: 'webhook', url: `${receiver.url}/`, extra: 1 })).status(422);
    expectResponse(await h.admin.get(`${BASE}/channels/ch_00000000000000000000`))
      .status(404)
      .detail('unknown notification channel ch_00000000000000000000');
    expectResponse(await h.admin.get(`${BASE}/channels/nope`)).status(422);
    const { channel: ch } = await webhook('/subs');
    expectResponse(await h.admin.post(`${BASE}/channels/${ch.channel_id}/subscriptions`, { kinds: ['no_such_kind'] })).status(422);
    expectResponse(await h.admin.delete(`${BASE}/channels/${ch.channel_id}/subscriptions/sub_00000000000000000000`)).status(404);
    expectResponse(await h.admin.patch(`${BASE}/channels/${ch.channel_id}`, {})).status(422);
    expectResponse(await h.admin.patch(`${BASE}/channels/${ch.channel_id}`, { address: 'a@example.net' })).status(422);
    expectResponse(await h.admin.post(`${BASE}/channels`, { name: 'x', type: 'webhook', url: 'http://' })).status(422);
    // Odd hosts are refused with a reason, never a 5xx.
    for (const url of [
      'http://exa\u0000mple.net/',
      'http://[fe80::1%25eth0]/',
      `http://${'a'.repeat(70)}.example/`,
      'http://256.1.1.1/',
      'http://user:pw@example.net/',
      'http://\ud800.example/',
    ]) {
      const res = await h.admin.post(`${BASE}/channels`, { name: 'x', type: 'webhook', url });
      expect(res.status, `${url}: ${res.text}`).to.equal(422);
    }
  });
});

describe('Notification webhooks refuse private, loopback and metadata targets (no NOTIFY_WEBHOOK_ALLOW)', function () {
  this.timeout(60_000);
  let h: AgentHarness;
  let receiver: Receiver;

  before(async () => {
    receiver = await new Receiver().start();
    h = await startAgents([]);
  });
  after(async () => {
    await h?.close();
    await receiver?.close();
  });

  for (const [what, url] of [
    ['loopback', 'http://127.0.0.1:9/hook'],
    ['IPv6 loopback', 'http://[::1]:9/hook'],
    ['the metadata address', 'http://169.254.169.254/latest/meta-data/'],
    ['10/8', 'http://10.1.2.3/hook'],
    ['a ULA (fd00::/8)', 'http://[fd00::1]/hook'],
    ['CGNAT', 'http://100.64.0.1/hook'],
    ['dn42 IPv4', 'http://172.20.0.1/hook'],
    ['an IPv4-mapped loopback', 'http://[::ffff:127.0.0.1]/hook'],
    ['a name resolving to loopback', 'http://localhost:9/hook'],
    ['a legacy IPv4 form of loopback', 'http://0x7f.1/hook'],
    ['a decimal IPv4 form of the metadata address', 'http://2852039166/'],
  ] as const) {
    it(`refuses ${what}`, async () => {
      const res = await h.admin.post('/admin/notifications/channels', { name: 'x', type: 'webhook', url });
      expectResponse(res)
        .status(422)
        .detail(/^url refused: /);
    });
  }

  it('checks again at connect time: a name resolving to loopback is refused by the socket lookup', async () => {
    const policy = { allow: [] as string[], timeoutMs: 3000, maxResponseBytes: 1024 };
    const port = new URL(receiver.url).port;
    const err = await postWebhook(`http://localhost:${port}/rebound`, '{}', {}, policy).then(
      () => null,
      (e: Error) => e,
    );
    expect(err).to.be.instanceOf(RefusedTarget);
    expect(err!.message).to.match(/localhost resolves to a refused address: .* is not a public address \(loopback\)/);
    // Barrier: an allowed request reaches the receiver afterwards; the refused one never did.
    await postWebhook(`${receiver.url}/allowed`, '{}', {}, { ...policy, allow: ['127.0.0.0/8'] });
    expect(receiver.requests.map((r) => r.path)).to.deep.equal(['/allowed']);
  });

  it('caps the response it reads and bounds the exchange with a deadline', async () => {
    const policy = { allow: ['127.0.0.0/8'], timeoutMs: 500, maxResponseBytes: 1024 };
    const before = receiver.respond;
    receiver.respond = (r, res) => {
      if (r.path === '/big') res.writeHead(200).end('x'.repeat(1_000_000));
      else if (r.path === '/slow')
        res.writeHead(200); // never ends
      else before(r, res);
    };
    const big = await postWebhook(`${receiver.url}/big`, '{}', {}, policy);
    expect(big.status).to.equal(200);
    expect(big.body.length).to.be.at.most(1024);
    const slow = await postWebhook(`${receiver.url}/slow`, '{}', {}, policy).then(
      () => null,
      (e: Error) => e,
    );
    expect(slow?.message).to.match(/no answer within 500 ms/);
    receiver.respond = before;
  });
});
