import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import type { ChannelDeps } from '../../commands/notify/channels.js';
import { nodeStatusStream } from '../../domain/telemetry/health.js';
import { notificationId } from '../../infra/notify/outbox.js';
import { nodeHealthWebhook, Receiver } from '../http/control/notifications/support.js';
import { freePort } from '../support/ports.js';
import { createTestSystem, type TestSystem } from '../support/system.js';
import { eventually } from '../support/wait.js';
import { serveControl } from './support/server.js';

const ADMIN_TOKEN = 'notify-kill-spec-admin-token-0123456789';
const COUNT = 400;
/** Kill once this many distinct notifications have arrived (a count, not a time: the same point under load). */
const KILL_AT = 120;

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];

describe('kill -9 of the delivering control process during a burst of notifications (issue 32)', function () {
  this.timeout(240_000);
  let sys: TestSystem;
  let receiver: Receiver;
  let dataDir: string;

  before(async () => {
    receiver = await new Receiver().start();
    // The spec's own system on the database: it appends the events, as agents' reports would make the server do.
    sys = await createTestSystem({ env: { NOTIFY_WEBHOOK_ALLOW: '127.0.0.0/8' } });
    dataDir = mkdtempSync(join(tmpdir(), 'dn42-notify-kill-'));
  });
  after(async () => {
    await sys?.close();
    await receiver?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it(`delivers every one of ${COUNT} notifications; the receiver, deduplicating by key, has exactly one of each`, async () => {
    // Each answer takes a little while, so deliveries are in flight when the process dies.
    receiver.respond = (_r, res) => void setTimeout(() => res.writeHead(204).end(), 50);
    const deps: ChannelDeps = { pool: sys.pool, store: sys.context.store, now: () => new Date(), webhookAllow: ['127.0.0.0/8'], mailConfigured: false };
    const channel = await nodeHealthWebhook(deps, 'burst', `${receiver.url}/burst`);

    const port = await freePort();
    const env = {
      DATABASE_URL: sys.db.url,
      DATA_DIR: dataDir,
      ADMIN_TOKEN,
      LOG_LEVEL: 'warn',
      NOTIFY_WEBHOOK_ALLOW: '127.0.0.0/8',
      NOTIFY_POLL_MS: '200',
      // A killed instance's leased rows are taken again after this.
      NOTIFY_LEASE_MS: '3000',
      NOTIFY_TIMEOUT_MS: '2000',
      NOTIFY_FLOOD_LIMIT: '100000',
    };
    let server = await serveControl(port, env, ['projections']);
    const appendedAt = new Map<string, number>();
    let appending = true;
    // The burst: real events, one after another, while the server delivers, dies and comes back.
    const writer = (async () => {
      for (let i = 0; i < COUNT; i++) {
        const node = `k${i}`;
        const at = Date.now();
        const { events } = await sys.context.store.append(
          [
            {
              streamId: nodeStatusStream(node),
              expected: 'any',
              events: [{ type: 'NodeHealthChanged', data: { node_id: node, from: 'ok', to: 'down', reasons: [`burst ${i}`] } }],
            },
          ],
          { actor: 'spec', recordedAt: new Date(at).toISOString() },
        );
        appendedAt.set(notificationId(events[0].id, channel.channel_id), at);
        // Pacing: a burst of about 200 events a second.
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      appending = false;
    })();
    await eventually(() => receiver.byKey('/burst').size >= KILL_AT, { timeoutMs: 60_000, what: `${KILL_AT} delivered before the kill` });
    server.child.kill('SIGKILL');
    const killedAt = Date.now();
    const killed = await server.closed;
    expect(killed.signal).to.equal('SIGKILL');
    const atKill = receiver.byKey('/burst').size;
    server = await serveControl(port, env, ['projections']);
    try {
      await writer;
      expect(appending).to.equal(false);
      await eventually(async () => (await sys.pool.query(`SELECT count(*)::int AS n FROM notify_outbox WHERE status = 'delivered'`)).rows[0].n === COUNT, {
        timeoutMs: 120_000,
        what: `${COUNT} delivered`,
        explain: async () => (await sys.pool.query(`SELECT status, count(*)::int FROM notify_outbox GROUP BY 1`)).rows,
      });
    } finally {
      // Barrier: a stopped process has finished its sends; whatever it sent has arrived.
      server.child.kill('SIGTERM');
      await server.closed;
    }
    const byKey = receiver.byKey('/burst');
    expect(byKey.size, 'distinct notifications received').to.equal(COUNT);
    expect([...byKey.keys()].sort()).to.deep.equal([...appendedAt.keys()].sort());
    const total = receiver.on('/burst').length;
    // Only what was in flight when the process died is sent again: at most one claimed batch (16).
    expect(total - COUNT, 'duplicates').to.be.at.most(16);
    const latency = (keys: [string, { wallAt: number }[]][]) => keys.map(([key, got]) => got[0].wallAt - appendedAt.get(key)!).sort((x, y) => x - y);
    const all = latency([...byKey.entries()]);
    const beforeKill = latency([...byKey.entries()].filter(([, got]) => got[0].wallAt <= killedAt));
    console.log(
      `      kill -9: ${COUNT} notifications, ${atKill} delivered before the kill, ${total} requests received, ${total - COUNT} duplicates before deduplication, ` +
        `0 missing; latency (append to first arrival) p50 ${percentile(all, 50)} ms, p99 ${percentile(all, 99)} ms, max ${all.at(-1)} ms; ` +
        `before the kill p50 ${percentile(beforeKill, 50)} ms, p99 ${percentile(beforeKill, 99)} ms`,
    );
  });
});
