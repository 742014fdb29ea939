import { expect } from 'chai';
import type { ChannelDeps } from '../../commands/notify/channels.js';
import type { Notifier } from '../../commands/notify/notifier.js';
import { nodeStatusStream } from '../../domain/telemetry/health.js';
import { notificationId } from '../../infra/notify/outbox.js';
import { NOTIFY_ENV, nodeHealthWebhook, Receiver, startTestNotifier, wallClock } from '../http/control/notifications/support.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { createTestSystem, type TestSystem } from '../support/system.js';
import { TcpRelay } from '../support/tcp-relay.js';
import { eventually } from '../support/wait.js';

const PER_PHASE = 50;

describe('the notifier while its database goes away (issue 32)', function () {
  this.timeout(120_000);
  let db: TestDatabase;
  let relay: TcpRelay;
  /** The notifying instance: its pool and listener go through the relay. */
  let cutOff: TestSystem;
  /** Another instance on the database itself, appending the events. */
  let writer: TestSystem;
  let receiver: Receiver;
  let notifier: Notifier | undefined;

  before(async () => {
    receiver = await new Receiver().start();
    db = await createTestDatabase();
    writer = await createTestSystem({ database: db, env: NOTIFY_ENV });
    relay = new TcpRelay(new URL(db.url));
    await relay.open();
    const relayed = new URL(db.url);
    relayed.host = `127.0.0.1:${relay.port}`;
    cutOff = await createTestSystem({
      database: { ...db, url: relayed.toString() },
      env: { ...NOTIFY_ENV, NOTIFY_LEASE_MS: '2000', NOTIFY_TIMEOUT_MS: '1500', NOTIFY_FLOOD_LIMIT: '100000' },
    });
    wallClock(writer);
    wallClock(cutOff);
  });
  after(async () => {
    await notifier?.stop();
    await cutOff?.close().catch(() => {});
    await relay?.cut().catch(() => {});
    await writer?.close();
    await db?.drop();
    await receiver?.close();
  });

  it('delivers what happened before, during and after the outage, each once to a deduplicating receiver, without a restart', async () => {
    receiver.respond = (_r, res) => void setTimeout(() => res.writeHead(204).end(), 5);
    const deps: ChannelDeps = { pool: writer.pool, store: writer.context.store, now: () => new Date(), webhookAllow: ['127.0.0.0/8'], mailConfigured: false };
    const channel = await nodeHealthWebhook(deps, 'outage', `${receiver.url}/outage`);
    notifier = startTestNotifier(cutOff);
    const keys: string[] = [];
    const burst = async (phase: string) => {
      for (let i = 0; i < PER_PHASE; i++) {
        const node = `${phase}${i}`;
        const { events } = await writer.context.store.append(
          [
            {
              streamId: nodeStatusStream(node),
              expected: 'any',
              events: [{ type: 'NodeHealthChanged', data: { node_id: node, from: 'ok', to: 'stale', reasons: [phase] } }],
            },
          ],
          { actor: 'spec', recordedAt: new Date().toISOString() },
        );
        keys.push(notificationId(events[0].id, channel.channel_id));
      }
    };
    await burst('before');
    // Cut while the first burst is being delivered.
    await eventually(() => receiver.byKey('/outage').size >= 10, { what: 'deliveries under way' });
    await relay.cut();
    await burst('during');
    const duringCut = receiver.byKey('/outage').size;
    await relay.open();
    await burst('after');
    await eventually(
      async () => (await writer.pool.query(`SELECT count(*)::int AS n FROM notify_outbox WHERE status = 'delivered'`)).rows[0].n === 3 * PER_PHASE,
      {
        timeoutMs: 60_000,
        what: 'every notification delivered',
        explain: async () => {
          const ids = new Set((await writer.pool.query(`SELECT id FROM notify_outbox`)).rows.map((r) => r.id));
          return { missing: keys.map((k, i) => [i, k]).filter(([, k]) => !ids.has(k)), cursor: (await writer.pool.query(`SELECT * FROM notify_cursor`)).rows };
        },
      },
    );
    // Barrier: a stopped notifier has finished its sends.
    await notifier.stop();
    notifier = undefined;
    const byKey = receiver.byKey('/outage');
    expect([...byKey.keys()].sort()).to.deep.equal([...keys].sort());
    const total = receiver.on('/outage').length;
    expect(total - keys.length, 'sent again (in flight at the cut)').to.be.at.most(16);
    console.log(
      `      outage: ${keys.length} notifications, ${duringCut} received when the connection came back, ${total - keys.length} sent twice, 0 missing`,
    );
  });
});
