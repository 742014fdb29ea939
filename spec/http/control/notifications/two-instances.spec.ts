import { expect } from 'chai';
import type { ChannelDeps } from '../../../../commands/notify/channels.js';
import type { Notifier } from '../../../../commands/notify/notifier.js';
import { nodeStatusStream } from '../../../../domain/telemetry/health.js';
import { createTestSystem, type TestSystem } from '../../../support/system.js';
import { eventually } from '../../../support/wait.js';
import { NOTIFY_ENV, nodeHealthWebhook, Receiver, startTestNotifier, wallClock } from './support.js';

const COUNT = 300;

describe('Two instances on one database deliver each notification once (issue 32)', function () {
  this.timeout(120_000);
  let a: TestSystem;
  let b: TestSystem;
  let receiver: Receiver;
  const notifiers: Notifier[] = [];

  before(async () => {
    receiver = await new Receiver().start();
    const env = { ...NOTIFY_ENV, NOTIFY_FLOOD_LIMIT: '100000' };
    a = await createTestSystem({ env });
    b = await createTestSystem({ env, database: a.db });
    wallClock(a);
    wallClock(b);
  });
  after(async () => {
    for (const n of notifiers) await n.stop();
    await b?.close();
    await a?.close();
    await receiver?.close();
  });

  it(`fans out and delivers ${COUNT} events exactly once between them, and both take part`, async () => {
    // Each delivery takes a little while, so both instances find due rows.
    receiver.respond = (_r, res) => void setTimeout(() => res.writeHead(204).end(), 5);
    const deps: ChannelDeps = { pool: a.pool, store: a.context.store, now: a.clock.now, webhookAllow: a.config.notifyWebhookAllow, mailConfigured: false };
    await nodeHealthWebhook(deps, 'both', `${receiver.url}/both`);
    notifiers.push(startTestNotifier(a), startTestNotifier(b));
    // Real events, appended through A's store while both run: both subscribers race for the cursor, both deliverers for the rows.
    for (let i = 0; i < COUNT; i++) {
      const node = `x${i}`;
      await a.context.store.append(
        [
          {
            streamId: nodeStatusStream(node),
            expected: 'any',
            events: [{ type: 'NodeHealthChanged', data: { node_id: node, from: 'ok', to: 'degraded', reasons: [`spec ${i}`] } }],
          },
        ],
        { actor: 'spec', recordedAt: new Date().toISOString() },
      );
    }
    await eventually(async () => (await a.pool.query(`SELECT count(*)::int AS n FROM notify_outbox WHERE status = 'delivered'`)).rows[0].n === COUNT, {
      timeoutMs: 60_000,
      what: `${COUNT} delivered`,
      explain: async () => (await a.pool.query(`SELECT status, count(*) FROM notify_outbox GROUP BY 1`)).rows,
    });
    // Barrier: stopping waits for every send in flight; whatever either sent has arrived.
    for (const n of notifiers.splice(0)) await n.stop();
    const byKey = receiver.byKey('/both');
    expect(byKey.size).to.equal(COUNT);
    expect(
      [...byKey.values()].filter((r) => r.length > 1),
      'notifications received twice',
    ).to.deep.equal([]);
    const { rows } = await a.pool.query<{ instance: string; n: number }>(`SELECT instance, count(*)::int AS n FROM notify_attempts GROUP BY 1 ORDER BY 1`);
    expect(rows, 'both instances delivered some').to.have.length(2);
    console.log(`      two instances: ${COUNT} notifications, ${rows.map((r) => r.n).join(' + ')} deliveries, 0 received twice`);
  });
});
