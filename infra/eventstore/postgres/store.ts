import { fileURLToPath } from 'node:url';
import type pg from 'pg';
import type { MigrationSet } from '../../db/migrate.js';
import { PgListener } from '../../db/listener.js';
import type { Logger } from '../../logger.js';
import { pollingSubscription } from '../subscription.js';
import {
  START,
  WrongExpectedVersion,
  type AppendResult,
  type EventMetadata,
  type EventStore,
  type GlobalPosition,
  type InlineHandler,
  type RecordedEvent,
  type StreamWrite,
  type SubscribeOptions,
  type TransactionContext,
  type Subscription,
} from '../types.js';
import * as sql from './sql.js';

export const eventStoreMigrations: MigrationSet = {
  name: 'eventstore',
  dir: fileURLToPath(new URL('./migrations', import.meta.url)),
};

export const EVENTS_CHANNEL = 'dn42_events';

interface EventRow {
  event_id: string;
  position: string;
  /** xid8 as text: it does not fit a JS number, and its text must never be what rows are sorted by. */
  tx_text: string;
  stream_id: string;
  version: number;
  type: string;
  data: unknown;
  metadata: EventMetadata;
  recorded_at: Date;
}

function toRecorded(row: EventRow): RecordedEvent {
  return {
    id: row.event_id,
    streamId: row.stream_id,
    version: row.version,
    type: row.type,
    data: row.data,
    metadata: row.metadata,
    position: { tx: BigInt(row.tx_text), pos: BigInt(row.position) },
    recordedAt: row.recorded_at,
  };
}

export interface PgEventStoreOptions {
  pool: pg.Pool;
  /** Needed for live subscriptions (LISTEN); shared with other listeners of the process. */
  listener?: PgListener;
  log: Logger;
  pollIntervalMs?: number;
}

/** The PostgreSQL event store: one events table, exact expected versions, xid8-safe global order. */
export class PgEventStore implements EventStore {
  private readonly inline: InlineHandler[] = [];
  private readonly localWatchers = new Set<() => void>();
  private notifyWanted = false;
  private notifying: Promise<void> | undefined;
  private readonly pool: pg.Pool;
  private readonly listener?: PgListener;
  private readonly log: Logger;
  private readonly pollIntervalMs: number;

  constructor(options: PgEventStoreOptions) {
    this.pool = options.pool;
    this.listener = options.listener;
    this.log = options.log;
    this.pollIntervalMs = options.pollIntervalMs ?? 1000;
  }

  readonly transactional = true;

  onAppend(handler: InlineHandler): void {
    this.inline.push(handler);
  }

  async append(writes: readonly StreamWrite[], metadata: EventMetadata): Promise<AppendResult> {
    // Streams are locked in a fixed order so that two multi-stream appends over the
    // same streams cannot deadlock.
    const ordered = [...writes].sort((a, b) => (a.streamId < b.streamId ? -1 : a.streamId > b.streamId ? 1 : 0));
    for (let i = 1; i < ordered.length; i++) {
      if (ordered[i].streamId === ordered[i - 1].streamId) throw new Error(`stream ${ordered[i].streamId} appears twice in one append`);
    }
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      const versions: Record<string, number> = {};
      const rows = { id: [] as (string | null)[], stream: [] as string[], version: [] as number[], type: [] as string[], data: [] as string[], meta: [] as string[] };
      const meta = JSON.stringify({ ...metadata, recordedAt: metadata.recordedAt ?? new Date().toISOString() });
      for (const write of ordered) {
        const last = await reserveVersions(client, write);
        versions[write.streamId] = last;
        write.events.forEach((event, i) => {
          rows.id.push(event.id ?? null);
          rows.stream.push(write.streamId);
          rows.version.push(last - write.events.length + 1 + i);
          rows.type.push(event.type);
          rows.data.push(JSON.stringify(event.data ?? null));
          rows.meta.push(meta);
        });
      }
      let events: RecordedEvent[] = [];
      if (rows.stream.length > 0) {
        const inserted = await client.query<EventRow>(sql.insertEvents, [rows.stream, rows.version, rows.type, rows.data, rows.meta, rows.id]);
        events = inserted.rows.map(toRecorded).sort((a, b) => (a.position.pos < b.position.pos ? -1 : 1));
        for (const handler of this.inline) await handler(client, events);
      }
      await client.query('COMMIT');
      if (events.length > 0) this.announce();
      return { versions, events };
    } catch (err) {
      await client.query('ROLLBACK').catch(() => {});
      throw err;
    } finally {
      client.release();
    }
  }

  async readStream(streamId: string, options: { fromVersion?: number } = {}): Promise<RecordedEvent[]> {
    const result = await this.pool.query<EventRow>(sql.readStream, [streamId, options.fromVersion ?? 0]);
    return result.rows.map(toRecorded);
  }

  async readAll(from: GlobalPosition = START, limit = 1000): Promise<RecordedEvent[]> {
    const result = await this.pool.query<EventRow>(sql.readAll, [from.tx.toString(), from.pos.toString(), limit]);
    return result.rows.map(toRecorded);
  }

  async readAllInTransaction(tx: TransactionContext, from: GlobalPosition, limit: number): Promise<RecordedEvent[]> {
    const result = await tx.query(sql.readAllInSnapshot, [from.tx.toString(), from.pos.toString(), limit]);
    return (result.rows as EventRow[]).map(toRecorded);
  }

  async readLast(limit: number): Promise<RecordedEvent[]> {
    const result = await this.pool.query<EventRow>(sql.readLast, [limit]);
    return result.rows.map(toRecorded).reverse();
  }

  async headPosition(): Promise<GlobalPosition> {
    const result = await this.pool.query<{ tx_text: string; position: string }>(sql.head);
    const row = result.rows[0];
    return row ? { tx: BigInt(row.tx_text), pos: BigInt(row.position) } : START;
  }

  async countAfter(from: GlobalPosition): Promise<number> {
    const result = await this.pool.query<{ count: string }>(sql.countAfter, [from.tx.toString(), from.pos.toString()]);
    return Number(result.rows[0].count);
  }

  watch(notify: () => void): () => void {
    this.localWatchers.add(notify);
    const listener = this.listener;
    if (!listener) return () => this.localWatchers.delete(notify);
    void listener.listen(EVENTS_CHANNEL).catch((err) => this.log.warn({ err }, 'LISTEN failed; polling only'));
    const onNotification = (channel: string) => channel === EVENTS_CHANNEL && notify();
    listener.on('notification', onNotification);
    listener.on('reconnected', notify);
    return () => {
      this.localWatchers.delete(notify);
      listener.off('notification', onNotification);
      listener.off('reconnected', notify);
    };
  }

  /**
   * Tells readers that events were committed: watchers in this process at once,
   * other processes by one NOTIFY sent after the commit. NOTIFY inside the append
   * would serialize concurrent commits on the notification queue lock; outside,
   * appends that commit while one is in flight share the next one. Losing it
   * (crash right after commit) costs readers one poll interval, nothing more.
   */
  private announce(): void {
    for (const notify of this.localWatchers) notify();
    this.notifyWanted = true;
    if (this.notifying) return;
    this.notifying = (async () => {
      while (this.notifyWanted) {
        this.notifyWanted = false;
        await this.pool.query(sql.notify, [EVENTS_CHANNEL]).catch((err) => this.log.warn({ err }, 'NOTIFY failed; readers will poll'));
      }
    })().finally(() => {
      this.notifying = undefined;
    });
  }

  subscribeAll(handler: (event: RecordedEvent) => Promise<void> | void, options: SubscribeOptions = {}): Subscription {
    return pollingSubscription({
      read: (from, limit) => this.readAll(from, limit),
      handler,
      from: options.from ?? START,
      batchSize: options.batchSize ?? 500,
      pollIntervalMs: this.pollIntervalMs,
      wake: (notify) => this.watch(notify),
      onError: options.onError ?? ((err) => this.log.error({ err }, 'subscription failed; retrying')),
    });
  }

  async close(): Promise<void> {
    // The pool and listener belong to the caller; only a NOTIFY in flight is ours.
    await this.notifying;
  }
}

/**
 * Checks the stream's expected version and moves it forward by the number of new
 * events, under the stream row's lock. Returns the version of the last new event.
 */
async function reserveVersions(client: pg.PoolClient, write: StreamWrite): Promise<number> {
  const count = write.events.length;
  const { streamId, expected } = write;
  const current = async (): Promise<number | 'no_stream'> => {
    const r = await client.query<{ version: number }>(sql.streamVersion, [streamId]);
    return r.rows[0]?.version ?? 'no_stream';
  };
  if (count === 0) {
    // A pure guard: the stream must be as expected, and stay so until we commit.
    const actual = await current();
    const ok =
      expected === 'any' ||
      (expected === 'no_stream' && actual === 'no_stream') ||
      (expected === 'exists' && actual !== 'no_stream') ||
      expected === actual;
    if (!ok) throw new WrongExpectedVersion(streamId, expected, actual);
    return actual === 'no_stream' ? -1 : actual;
  }
  let result: { rows: { version: number }[] };
  if (expected === 'no_stream') result = await client.query(sql.createStream, [streamId, count - 1]);
  else if (expected === 'any') result = await client.query(sql.upsertStream, [streamId, count]);
  else if (expected === 'exists') result = await client.query(sql.advanceExisting, [streamId, count]);
  else result = await client.query(sql.advanceExact, [streamId, expected, count]);
  const row = result.rows[0];
  if (!row) throw new WrongExpectedVersion(streamId, expected, await current());
  return row.version;
}
