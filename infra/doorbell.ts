import { randomUUID } from 'node:crypto';
import type { Delivery, Doorbell, DoorbellBroadcaster, DoorbellEvent } from '../commands/doorbell.js';
import type { Queryable } from './db/pool.js';
import type { PgListener } from './db/listener.js';
import type { Logger } from './logger.js';

export const DOORBELL_CHANNEL = 'dn42_doorbell';

/** PostgreSQL NOTIFY payloads are limited to 8000 bytes; reasons are cut to keep far below. */
const MAX_REASON = 200;

/**
 * Rings agents connected to any instance: this process's broadcaster at once
 * (its counts go into the response), the others through `NOTIFY dn42_doorbell`.
 * Each instance skips its own notifications.
 */
export class PgDoorbell implements Doorbell {
  readonly origin = randomUUID();
  private broadcaster: DoorbellBroadcaster;
  private readonly onNotification = (channel: string, payload: string) => {
    if (channel !== DOORBELL_CHANNEL) return;
    try {
      const message = JSON.parse(payload) as { origin: string; events: DoorbellEvent[] };
      if (message.origin === this.origin) return;
      for (const event of message.events) this.broadcaster.deliver(event);
    } catch (err) {
      this.log.warn({ err }, 'ignoring a malformed doorbell notification');
    }
  };

  constructor(
    private readonly db: Queryable,
    private readonly listener: PgListener,
    private readonly log: Logger,
    broadcaster: DoorbellBroadcaster,
  ) {
    this.broadcaster = broadcaster;
  }

  /** Starts receiving other instances' doorbells. */
  async start(): Promise<void> {
    this.listener.on('notification', this.onNotification);
    await this.listener.listen(DOORBELL_CHANNEL);
  }

  stop(): void {
    this.listener.off('notification', this.onNotification);
  }

  /** The agent channel plugs its hub in here. */
  setBroadcaster(broadcaster: DoorbellBroadcaster): void {
    this.broadcaster = broadcaster;
  }

  async ring(events: readonly DoorbellEvent[]): Promise<Delivery[]> {
    if (events.length === 0) return [];
    const trimmed = events.map((e) => ('reason' in e && e.reason && e.reason.length > MAX_REASON ? { ...e, reason: e.reason.slice(0, MAX_REASON) } : e));
    const deliveries = trimmed.map((e) => this.broadcaster.deliver(e));
    try {
      // Batches of events that fit one payload.
      for (let i = 0; i < trimmed.length; i += 20) {
        await this.db.query(`SELECT pg_notify($1, $2)`, [DOORBELL_CHANNEL, JSON.stringify({ origin: this.origin, events: trimmed.slice(i, i + 20) })]);
      }
    } catch (err) {
      this.log.error({ err, nodes: trimmed.map((e) => e.node_id) }, 'doorbell NOTIFY failed; agents catch up on their next reconcile');
    }
    return deliveries;
  }
}
