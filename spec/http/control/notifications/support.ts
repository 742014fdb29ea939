import { createHmac } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { addSubscription, createChannel, type ChannelDeps } from '../../../../commands/notify/channels.js';
import { notifierDeps, startNotifier, type Notifier, type NotifierDeps } from '../../../../commands/notify/notifier.js';
import { notifyLocalize } from '../../../../cli/system.js';
import type { TestSystem } from '../../../support/system.js';

/** One request a receiver got. */
export interface Received {
  path: string;
  headers: IncomingMessage['headers'];
  body: string;
  /** performance.now() when it arrived. */
  at: number;
  /** Date.now() when it arrived (to compare with times of other processes). */
  wallAt: number;
}

/**
 * A real HTTP receiver on loopback: records every request and answers with
 * `respond` (default 204). `byKey` deduplicates by the idempotency key, as a
 * receiver is told to.
 */
export class Receiver {
  readonly requests: Received[] = [];
  respond: (req: Received, res: ServerResponse) => void = (_req, res) => res.writeHead(204).end();
  private server?: Server;
  url = '';

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const received = {
          path: req.url ?? '/',
          headers: req.headers,
          body: Buffer.concat(chunks).toString('utf8'),
          at: performance.now(),
          wallAt: Date.now(),
        };
        this.requests.push(received);
        this.respond(received, res);
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  on(path: string): Received[] {
    return this.requests.filter((r) => r.path === path);
  }

  /** Requests by idempotency key (the receiver's deduplication). */
  byKey(path?: string): Map<string, Received[]> {
    const out = new Map<string, Received[]>();
    for (const r of path ? this.on(path) : this.requests) {
      const key = String(r.headers['idempotency-key']);
      out.set(key, [...(out.get(key) ?? []), r]);
    }
    return out;
  }

  async close(): Promise<void> {
    await new Promise<void>((resolve) => {
      this.server?.close(() => resolve());
      this.server?.closeAllConnections();
    });
  }
}

/** What the README tells a receiver to do: recompute the HMAC over `timestamp.body` and compare. */
export function verifySignature(secret: string, r: Received): boolean {
  const timestamp = String(r.headers['x-dn42-timestamp']);
  const expected = `v1=${createHmac('sha256', secret).update(`${timestamp}.${r.body}`).digest('hex')}`;
  return r.headers['x-dn42-signature'] === expected;
}

/** Settings of the notification specs: loopback receivers allowed, quick polling and retries, pausing after 3 failures. */
export const NOTIFY_ENV = {
  NOTIFY_WEBHOOK_ALLOW: '127.0.0.0/8,::1',
  NOTIFY_POLL_MS: '50',
  NOTIFY_RETRY_BASE_MS: '100',
  NOTIFY_PAUSE_AFTER: '3',
  NOTIFY_TIMEOUT_MS: '3000',
};

/** The notifier of a test system, on its clock. */
export function startTestNotifier(sys: TestSystem, overrides: Partial<NotifierDeps> = {}): Notifier {
  return startNotifier({ ...notifierDeps({ ...sys.context, localize: notifyLocalize(sys.context) }), ...overrides });
}

/**
 * Makes a test system's clock the wall clock (a retry's backoff, a lease and
 * the 24 h give-up are compared with the clock that queued the notification).
 */
export function wallClock(sys: TestSystem): void {
  Object.defineProperty(sys.clock, 'current', { configurable: true, get: () => new Date(), set: () => {} });
}

/** An operator's webhook channel `name` on `url`, subscribed to every node health change (the burst specs' events); answers the channel. */
export async function nodeHealthWebhook(deps: ChannelDeps, name: string, url: string) {
  const { channel } = await createChannel(deps, null, { name, target: { type: 'webhook', url } }, { actor: 'spec' });
  await addSubscription(
    deps,
    null,
    channel.channel_id,
    { kinds: ['node_health'], node_ids: [], min_severity: 'info', repeat_window_s: 0, down_after_s: 0 },
    { actor: 'spec' },
  );
  return channel;
}
