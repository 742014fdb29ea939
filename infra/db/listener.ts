import { EventEmitter } from 'node:events';
import pg from 'pg';
import type { Logger } from '../logger.js';
import { wakeableSleep } from '../timing.js';

/**
 * A dedicated LISTEN connection shared by everything in the process that waits for
 * NOTIFY. Notifications are only wake-up hints: whoever listens also polls, so a
 * notification lost while reconnecting costs latency, never correctness.
 * Emits `notification` (channel, payload) and `reconnected` (listeners should
 * re-check their source after a gap).
 */
export class PgListener extends EventEmitter {
  private client: pg.Client | undefined;
  private readonly channels = new Set<string>();
  private closed = false;
  private connecting: Promise<void> | undefined;
  private attempt = 0;
  /** Ends the reconnect backoff early (close). */
  private cancelBackoff: (() => void) | undefined;

  constructor(
    private readonly connectionString: string,
    private readonly log: Logger,
  ) {
    super();
    this.setMaxListeners(0);
  }

  async listen(channel: string): Promise<void> {
    assertChannel(channel);
    if (this.channels.has(channel)) return;
    this.channels.add(channel);
    if (this.client) await this.client.query(`LISTEN ${channel}`).catch(() => this.scheduleReconnect());
    else await this.connect();
  }

  private async connect(): Promise<void> {
    if (this.connecting) return this.connecting;
    this.connecting = (async () => {
      while (!this.closed) {
        const client = new pg.Client({ connectionString: this.connectionString, application_name: 'dn42-control:listener' });
        try {
          await client.connect();
          for (const channel of this.channels) await client.query(`LISTEN ${channel}`);
          // Race: close() while this connection was coming up found no client to
          // end; keeping it would hold a connection (and the process) open for good.
          if (this.closed) {
            await retire(client);
            return;
          }
          client.on('notification', (msg) => this.emit('notification', msg.channel, msg.payload ?? ''));
          client.on('error', (err) => {
            this.log.warn({ err }, 'LISTEN connection lost');
            this.scheduleReconnect();
          });
          client.on('end', () => {
            if (this.client === client) this.scheduleReconnect();
          });
          this.client = client;
          if (this.attempt > 0) this.emit('reconnected');
          this.attempt = 0;
          return;
        } catch (err) {
          await client.end().catch(() => {});
          this.attempt += 1;
          const delay = Math.min(30_000, 250 * 2 ** Math.min(this.attempt, 7)) * (0.5 + Math.random() / 2);
          this.log.warn({ err, attempt: this.attempt, delay }, 'LISTEN connection failed; retrying');
          const backoff = wakeableSleep(delay);
          this.cancelBackoff = backoff.wake;
          await backoff.done;
          this.cancelBackoff = undefined;
        }
      }
    })().finally(() => {
      this.connecting = undefined;
    });
    return this.connecting;
  }

  private scheduleReconnect(): void {
    const old = this.client;
    this.client = undefined;
    void retire(old);
    if (!this.closed) {
      this.attempt = Math.max(this.attempt, 1);
      void this.connect();
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    this.cancelBackoff?.();
    const client = this.client;
    this.client = undefined;
    await retire(client);
  }
}

/**
 * Drops a client we no longer listen on. It keeps a no-op error handler: the
 * server may still end the connection (say, shutting down) while it closes, and
 * an unhandled 'error' would take the process down.
 */
async function retire(client: pg.Client | undefined): Promise<void> {
  if (!client) return;
  client.removeAllListeners();
  client.on('error', () => {});
  await client.end().catch(() => {});
}

function assertChannel(channel: string): void {
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(channel)) throw new Error(`invalid channel name ${channel}`);
}
