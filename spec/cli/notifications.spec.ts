import { expect } from 'chai';
import type { Notifier } from '../../commands/notify/notifier.js';
import { ADMIN_TOKEN } from '../http/control/fleet/support.js';
import { startAgents, type AgentHarness } from '../http/control/agent/telemetry-support.js';
import { NOTIFY_ENV, Receiver, startTestNotifier, verifySignature, wallClock } from '../http/control/notifications/support.js';
import { dn42Control } from '../support/cli.js';
import { eventually } from '../support/wait.js';

describe('dn42-control notifications (the admin API from the command line)', function () {
  this.timeout(120_000);
  let h: AgentHarness;
  let receiver: Receiver;
  let notifier: Notifier;
  let env: Record<string, string>;

  before(async () => {
    receiver = await new Receiver().start();
    h = await startAgents([], NOTIFY_ENV);
    wallClock(h.sys);
    notifier = startTestNotifier(h.sys);
    env = { DN42_CONTROL_URL: h.url, DN42_TOKEN: ADMIN_TOKEN };
  });
  after(async () => {
    await notifier?.stop();
    await h?.close();
    await receiver?.close();
  });

  const ok = async (args: string[]) => {
    const run = await dn42Control(args, env);
    expect(run.code, `${args.join(' ')}: ${run.stderr}`).to.equal(0);
    return run.stdout;
  };

  it('adds a webhook, subscribes it, test-sends, shows the delivery log, pauses, resumes and removes it', async () => {
    const added = await ok(['notifications', 'channels', 'add', '--name', 'noc chat', '--webhook', `${receiver.url}/cli`, '--payload', 'text']);
    const [, id] = /^channel (ch_[a-f0-9]{20}) added$/m.exec(added)!;
    const [, secret] = /^webhook signing secret \(shown this once\): (whsec_\S+)$/m.exec(added)!;
    const subscribed = await ok([
      'notifications',
      'subscribe',
      id,
      '--kind',
      'node_health',
      '--kind',
      'flap_alert_opened',
      '--node',
      'fra1',
      '--min-severity',
      'warning',
    ]);
    expect(subscribed).to.match(/^sub_[a-f0-9]{20} {2}kinds node_health,flap_alert_opened {2}nodes fra1 {2}from warning$/m);
    expect(await ok(['notifications', 'channels', 'test', id])).to.match(/^test notification ntf_[a-f0-9]{32} queued/);
    const [got] = await eventually(() => receiver.on('/cli').length === 1 && receiver.on('/cli'));
    expect(verifySignature(secret, got)).to.equal(true);
    await eventually(async () => (await ok(['notifications', 'deliveries', id])).includes('delivered'));
    const log = (await ok(['notifications', 'deliveries', id])).trimEnd().split('\n');
    expect(log[0].split(/\s+/)).to.deep.equal(['created_at', 'notification_id', 'kind', 'status', 'attempts', 'last_status', 'last_error', 'title']);
    expect(log[1].split(/\s{2,}/).slice(1)).to.deep.equal([
      got.headers['idempotency-key'],
      'test',
      'delivered',
      '1',
      '204',
      '-',
      'Test notification for noc chat',
    ]);
    const list = JSON.parse(await ok(['notifications', 'channels', 'list', '--json'])) as Record<string, unknown>[];
    expect(list.map((c) => c.channel_id)).to.include(id);
    expect(await ok(['notifications', 'channels', 'pause', id])).to.equal(`channel ${id}: paused (paused by hand)\n`);
    expect(await ok(['notifications', 'channels', 'resume', id])).to.equal(`channel ${id}: active\n`);
    expect(await ok(['notifications', 'channels', 'remove', id])).to.equal(`channel ${id} removed\n`);
    const gone = await dn42Control(['notifications', 'channels', 'show', id], env);
    expect(gone.code).to.equal(1);
    expect(gone.stderr).to.equal(`dn42-control: 404 unknown notification channel ${id}\n`);
  });

  it('refuses a loopback webhook outside the allow list with the API’s reason, and a channel with both targets', async () => {
    const both = await dn42Control(['notifications', 'channels', 'add', '--name', 'x', '--webhook', 'https://example.net/', '--email', 'a@example.net'], env);
    expect(both.code).to.equal(1);
    expect(both.stderr).to.match(/give exactly one of --webhook and --email/);
    const refused = await dn42Control(['notifications', 'channels', 'add', '--name', 'x', '--webhook', 'http://169.254.169.254/'], env);
    expect(refused.code).to.equal(1);
    expect(refused.stderr).to.equal('dn42-control: 422 url refused: 169.254.169.254 is not a public address (linkLocal)\n');
  });
});
