import { randomUUID } from 'node:crypto';
import type { Delivery, Doorbell, DoorbellBroadcaster, DoorbellEvent } from '../domain/doorbell.js';
import { remoteAgentCounts } from './agent-hub/presence.js';
import type { Queryable } from './db/pool.js';
import type { PgListener } from './db/listener.js';
import type { Logger } from './logger.js';

export const DOORBELL_CHANNEL = 'dn42_doorbell';

/** PostgreSQL NOTIFY payloads are limited to 8000 bytes; reasons are cut to keep far below. */
const MAX_REASON = 200;

/**
 * Bytes of one NOTIFY payload we allow ourselves (the server's limit is 8000,
 * counted in the database encoding). Events are packed up to this size; a single
 * event larger than it (many release files, a large probe spec) is stored in
 * `doorbell_payloads` and the notification carries only its id.
 */
export const NOTIFY_BUDGET = 7000;

/** Spilled payloads older than this are swept; receivers fetch them within milliseconds. */
const SPILL_TTL_SECONDS = 300;

type Notification = { origin: string; events: DoorbellEvent[] } | { origin: string; ref: string };

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
      const message = JSON.parse(payload) as Notification;
      if (message.origin === this.origin) return;
      if ('ref' in message) void this.deliverSpilled(message.ref);
      else for (const event of message.events) this.broadcaster.deliver(event);
    } catch (err) {
      this.log.warn({ err }, 'ignoring a malformed doorbell notification');
    }
  };

  constructor(
    private readonly db: Queryable,
    /** Shared with the agent sockets, which also listen for token revocations. */
    readonly listener: PgListener,
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

  /** The broadcaster in use (so that a hub can be added next to a test's recording one). */
  currentBroadcaster(): DoorbellBroadcaster {
    return this.broadcaster;
  }

  async ring(events: readonly DoorbellEvent[]): Promise<Delivery[]> {
    if (events.length === 0) return [];
    const trimmed = events.map((e) => ('reason' in e && e.reason && e.reason.length > MAX_REASON ? { ...e, reason: e.reason.slice(0, MAX_REASON) } : e));
    const deliveries = trimmed.map((e) => this.broadcaster.deliver(e));
    let notified = false;
    try {
      for (const payload of await this.payloads(trimmed)) await this.db.query(`SELECT pg_notify($1, $2)`, [DOORBELL_CHANNEL, payload]);
      notified = true;
    } catch (err) {
      this.log.error({ err, nodes: trimmed.map((e) => e.node_id) }, 'doorbell NOTIFY failed; agents catch up on their next reconcile');
    }
    return this.withOtherInstances(deliveries, notified);
  }

  /** Notification payloads: events packed up to NOTIFY_BUDGET bytes, oversized ones spilled to a table. */
  private async payloads(events: readonly DoorbellEvent[]): Promise<string[]> {
    const out: string[] = [];
    const head = `{"origin":${JSON.stringify(this.origin)},"events":[`;
    let batch: string[] = [];
    let size = head.length + 2;
    const flush = () => {
      if (batch.length) out.push(`${head}${batch.join(',')}]}`);
      batch = [];
      size = head.length + 2;
    };
    for (const event of events) {
      const json = JSON.stringify(event);
      const bytes = Buffer.byteLength(json) + 1;
      if (head.length + 2 + bytes > NOTIFY_BUDGET) {
        const { rows } = await this.db.query(`INSERT INTO doorbell_payloads (payload) VALUES ($1) RETURNING id::text AS id`, [json]);
        await this.db.query(`DELETE FROM doorbell_payloads WHERE created_at < now() - make_interval(secs => ${SPILL_TTL_SECONDS})`);
        out.push(JSON.stringify({ origin: this.origin, ref: rows[0].id }));
        continue;
      }
      if (size + bytes > NOTIFY_BUDGET) flush();
      batch.push(json);
      size += bytes;
    }
    flush();
    return out;
  }

  private async deliverSpilled(ref: string): Promise<void> {
    try {
      const { rows } = await this.db.query(`SELECT payload FROM doorbell_payloads WHERE id = $1`, [ref]);
      if (rows[0]) this.broadcaster.deliver(rows[0].payload as DoorbellEvent);
    } catch (err) {
      this.log.warn({ err, ref }, 'could not fetch a spilled doorbell; agents catch up on their next reconcile');
    }
  }

  /**
   * Adds the agents connected to other instances (presence rows) to the counts:
   * they are subscribers, and count as delivered once the NOTIFY went out.
   */
  private async withOtherInstances(deliveries: Delivery[], notified: boolean): Promise<Delivery[]> {
    try {
      const remote = await remoteAgentCounts(this.db, [...new Set(deliveries.map((d) => d.node_id))], this.origin);
      if (remote.size === 0) return deliveries;
      return deliveries.map((d) => {
        const n = remote.get(d.node_id) ?? 0;
        return { node_id: d.node_id, subscribers: d.subscribers + n, delivered: d.delivered + (notified ? n : 0) };
      });
    } catch (err) {
      this.log.warn({ err }, 'presence of other instances unavailable; counting this instance only');
      return deliveries;
    }
  }
}
