import { expect } from 'chai';
import { evaluateFlapAlerts } from '../../../../commands/flap-alerts.js';
import type { Notifier } from '../../../../commands/notify/notifier.js';
import { expectResponse } from '../../../support/http.js';
import { eventually } from '../../../support/wait.js';
import { TestSmtp } from '../../identity/verification-support.js';
import { startAgents, type AgentHarness } from '../agent/telemetry-support.js';
import { NOTIFY_ENV, Receiver, startTestNotifier } from './support.js';

const BASE = '/admin/notifications';
const PREFIX = '172.21.0.0/24';
const OPS = 'noc@ops.example';

/** The subject header of a raw message, unfolded (long headers continue on indented lines). */
const subjectOf = (raw: string) => /^Subject: (.*)$/m.exec(raw.replace(/\r?\n[ \t]+/g, ' '))?.[1] ?? '';

describe('E-mail notification channels through SMTP_URL (issue 32)', function () {
  this.timeout(60_000);
  let h: AgentHarness;
  let smtp: TestSmtp;
  let receiver: Receiver;
  let notifier: Notifier;

  before(async () => {
    smtp = await new TestSmtp().start();
    receiver = await new Receiver().start();
    h = await startAgents(['n1', 'n2'], { ...NOTIFY_ENV, SMTP_URL: smtp.url, MAIL_FROM: 'dn42 control <control@spec.example>' });
    notifier = startTestNotifier(h.sys);
  });
  after(async () => {
    await notifier?.stop();
    await h?.close();
    await receiver?.close();
    await smtp?.close();
  });

  async function add(body: Record<string, unknown>): Promise<string> {
    const res = await h.admin.post(`${BASE}/channels`, body);
    expectResponse(res).status(201);
    const id = res.body.channel.channel_id as string;
    expectResponse(await h.admin.post(`${BASE}/channels/${id}/subscriptions`, { kinds: ['flap_alert_opened'], repeat_window_s: 0 })).status(201);
    return id;
  }
  const deliveries = async (id: string) => (await h.admin.get(`${BASE}/channels/${id}/deliveries`)).body as Record<string, any>[];

  it("an operator's address needs no confirmation and receives a test mail", async () => {
    const res = await h.admin.post(`${BASE}/channels`, { name: 'NOC mail', type: 'email', address: 'test@ops.example' });
    expectResponse(res).status(201);
    expect(res.body.channel).to.include({ type: 'email', address: 'test@ops.example', confirmed: true, url: null });
    expect(res.body.secret).to.equal(null);
    expectResponse(await h.admin.post(`${BASE}/channels/${res.body.channel.channel_id}/test`)).status(202);
    const [mail] = await eventually(() => smtp.to('test@ops.example').length > 0 && smtp.to('test@ops.example'));
    expect(subjectOf(mail.raw)).to.equal('[info] Test notification for NOC mail');
    expect(mail.from).to.equal('control@spec.example');
  });

  it('a flap alert opened produces exactly one notification on the webhook and one mail', async () => {
    const mailChannel = await add({ name: 'NOC', type: 'email', address: OPS });
    const hookChannel = await add({ name: 'chat', type: 'webhook', url: `${receiver.url}/chat`, payload: 'text' });
    const body = {
      node_id: 'n1',
      captured_at: h.sys.clock.now().toISOString(),
      feed_state: 'established',
      entries: [{ prefix: PREFIX, peer_asn: 4242420002, origin_asn: 4242420077, score: 150 }],
    };
    expectResponse(await h.agent.n1.post('/agent/prefix-flaps', body)).status(200);
    expect(await evaluateFlapAlerts(h.sys.context, h.sys.clock.now())).to.include({ opened: 1 });
    const [mail] = await eventually(() => smtp.to(OPS).length > 0 && smtp.to(OPS), { what: 'the mail' });
    expect(subjectOf(mail.raw)).to.equal(`[warning] Flap alert opened: prefix ${PREFIX} from AS4242420002`);
    expect(mail.raw).to.match(/localised: /);
    await eventually(() => receiver.on('/chat').length > 0);
    // Barrier: both rows are recorded as delivered once (a second send would need a second claim of the same row).
    for (const id of [mailChannel, hookChannel])
      await eventually(async () => {
        const log = await deliveries(id);
        return log.length === 1 && log[0].status === 'delivered' && log[0].attempts === 1;
      });
    expect(smtp.to(OPS)).to.have.length(1);
    expect(receiver.on('/chat')).to.have.length(1);
  });

  it('an SMTP refusal is a failed attempt with its error, retried later', async () => {
    const res = await h.admin.post(`${BASE}/channels`, { name: 'refused', type: 'email', address: 'refused@ops.example' });
    const id = res.body.channel.channel_id as string;
    smtp.refuse = true;
    try {
      expectResponse(await h.admin.post(`${BASE}/channels/${id}/test`)).status(202);
      const [row] = await eventually(async () => {
        const log = await deliveries(id);
        return log[0]?.attempts >= 1 && log;
      });
      expect(row.status).to.equal('attempted');
      expect(row.last_error).to.match(/550/);
      expect(row.next_attempt_at).to.be.a('string');
    } finally {
      smtp.refuse = false;
    }
  });
});
