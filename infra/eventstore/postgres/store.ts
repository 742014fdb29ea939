import { fileURLToPath } from 'node:url';
import type pg from 'pg';
import type { MigrationSet } from '../../db/migrate.js';
import { PgListener } from '../../db/listener.js';
import { sleep } from '../../timing.js';
import { withTransaction, type Queryable } from '../../db/pool.js';
import { jsonBatch } from '../../db/json-batch.js';
import type { Logger } from '../../logger.js';
import { subscribeByPolling } from '../subscription.js';
import {
  START,
  WrongExpectedVersion,
  type AppendResult,
  type CountFilter,
  type EventMetadata,
  type EventStore,
  type GlobalPosition,
  type InlineHandler,
  type RecordedEvent,
  type StreamEventData,
  type StreamWrite,
  type SubscribeOptions,
  type TransactionContext,
  type Subscription,
  type WriteLock,
  type WriteSession,
} from '../types.js';
import * as sql from './sql.js';
import { KeyedLocks, Semaphore, sortLocks, writeLockKey } from './write-locks.js';

export const eventStoreMigrations: MigrationSet = {
  name: 'eventstore',
  dir: fileURLToPath(new URL('./migrations', import.meta.url)),
};

export const EVENTS_CHANNEL = 'dn42_events';

/** Other processes hear of new events at most this late (unless a NOTIFY is lost; then they poll). */
const NOTIFY_SPACING_MS = 5;

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

type AppendedRow = Omit<EventRow, 'data' | 'metadata'>;

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
  private readonly inline: { handler: InlineHandler; types?: ReadonlySet<string> }[] = [];
  private readonly localWatchers = new Set<() => void>();
  private notifyWanted = false;
  private notifying: Promise<void> | undefined;
  private lastNotifyAt = 0;
  private readonly pool: pg.Pool;
  private readonly listener?: PgListener;
  private readonly log: Logger;
  private readonly pollIntervalMs: number;
  private readonly keyed = new KeyedLocks();
  private readonly writers: Semaphore;

  constructor(options: PgEventStoreOptions) {
    this.pool = options.pool;
    this.writers = new Semaphore(Math.max(1, Math.floor((options.pool.options.max ?? 10) / 2)));
    this.listener = options.listener;
    this.log = options.log;
    this.pollIntervalMs = options.pollIntervalMs ?? 1000;
  }

  readonly transactional = true;

  onAppend(handler: InlineHandler, types?: readonly string[]): void {
    this.inline.push({ handler, types: types ? new Set(types) : undefined });
  }

  async append(writes: readonly StreamWrite[], metadata: EventMetadata): Promise<AppendResult> {
    const prepared = prepareAppend(writes, metadata);
    const inline = this.inlineFor(prepared);
    let events: RecordedEvent[];
    try {
      if (inline.length === 0) {
        // Nothing else to do in the transaction: one autocommitted statement.
        events = prepared.toWritten(await prepared.write(this.pool));
      } else {
        events = await withTransaction(this.pool, (client) => this.appendIn(client, prepared, inline));
      }
    } catch (err) {
      throw asConflict(err, prepared.ordered);
    }
    events.sort((a, b) => (a.position.pos < b.position.pos ? -1 : 1));
    if (events.length > 0) this.announce();
    return { versions: await versionsAfter(this.pool, prepared.ordered, events), events };
  }

  private inlineFor(prepared: PreparedAppend) {
    return this.inline.filter((h) => !h.types || prepared.flat.some((e) => h.types!.has(e.type)));
  }

  private async appendIn(client: pg.PoolClient, prepared: PreparedAppend, inline: readonly { handler: InlineHandler }[]): Promise<RecordedEvent[]> {
    const written = prepared.toWritten(await prepared.write(client));
    for (const { handler } of inline) await handler(client, written);
    return written;
  }

  /**
   * Writer locks: first in this process (`KeyedLocks`, no connection held while
   * waiting), then a connection among at most half the pool (the rest stays free
   * for the reads the writers make meanwhile, so waiting writers can never take
   * every connection from the one holding the lock), then the transaction-scoped
   * advisory locks every process on the database sees. All three in one order.
   */
  async withWriteLocks<T>(locks: readonly WriteLock[], work: (session: WriteSession) => Promise<T>): Promise<T> {
    const ordered = sortLocks(locks);
    const held = new Map(ordered.map((l) => [l.name, l]));
    const taken: WriteLock[] = [...ordered];
    let appended = false;
    await this.keyed.acquire(ordered);
    try {
      await this.writers.acquire();
      try {
        const result = await withTransaction(this.pool, async (client) => {
          if (ordered.length > 0) await client.query(sql.lock, [ordered.map((l) => writeLockKey(l.name)), ordered.map((l) => !!l.shared)]);
          const session: WriteSession = {
            tx: client,
            tryLock: async (names) => {
              // Held exclusively already: nothing to take. Held shared: an upgrade, which waits like any other.
              const wanted = sortLocks(names.filter((name) => !held.has(name) || !!held.get(name)!.shared).map((name) => ({ name })));
              if (wanted.length === 0) return true;
              if (!this.keyed.tryAcquire(wanted)) return false;
              for (const l of wanted) {
                taken.push(l);
                held.set(l.name, l);
              }
              return (await client.query<{ ok: boolean }>(sql.tryLock, [wanted.map((l) => writeLockKey(l.name))])).rows[0].ok === true;
            },
            append: async (writes, metadata) => {
              const prepared = prepareAppend(writes, metadata);
              let events: RecordedEvent[];
              try {
                events = await this.appendIn(client, prepared, this.inlineFor(prepared));
              } catch (err) {
                throw asConflict(err, prepared.ordered);
              }
              events.sort((a, b) => (a.position.pos < b.position.pos ? -1 : 1));
              appended ||= events.length > 0;
              return { versions: await versionsAfter(client, prepared.ordered, events), events };
            },
          };
          return work(session);
        });
        if (appended) this.announce();
        return result;
      } finally {
        this.writers.release();
      }
    } finally {
      this.keyed.release(taken);
    }
  }

  async readStream(streamId: string, options: { fromVersion?: number } = {}): Promise<RecordedEvent[]> {
    const result = await this.pool.query<EventRow>(sql.readStream, [streamId, options.fromVersion ?? 0]);
    return result.rows.map(toRecorded);
  }

  async streamVersion(streamId: string): Promise<number> {
    const rows = (await this.pool.query<{ stream_id: string; version: number }>(sql.streamVersions, [[streamId]])).rows;
    return rows[0]?.version ?? -1;
  }

  async readStreams(fromVersions: ReadonlyMap<string, number>): Promise<Map<string, RecordedEvent[]>> {
    const out = new Map([...fromVersions.keys()].map((id): [string, RecordedEvent[]] => [id, []]));
    if (fromVersions.size === 0) return out;
    const result = await this.pool.query<EventRow>(sql.readStreams, [[...fromVersions.keys()], [...fromVersions.values()]]);
    for (const row of result.rows) out.get(row.stream_id)!.push(toRecorded(row));
    return out;
  }

  async readStreamsData(fromVersions: ReadonlyMap<string, number>): Promise<Map<string, StreamEventData[]>> {
    const out = new Map([...fromVersions.keys()].map((id): [string, StreamEventData[]] => [id, []]));
    if (fromVersions.size === 0) return out;
    const result = await this.pool.query<StreamEventData & { stream_id: string }>(sql.readStreamsData, [[...fromVersions.keys()], [...fromVersions.values()]]);
    for (const row of result.rows) out.get(row.stream_id)!.push({ version: row.version, type: row.type, data: row.data });
    return out;
  }

  async streamVersions(streamIds: readonly string[]): Promise<Map<string, number>> {
    const out = new Map(streamIds.map((id): [string, number] => [id, -1]));
    if (streamIds.length === 0) return out;
    for (const row of (await this.pool.query<{ stream_id: string; version: number }>(sql.streamVersions, [[...new Set(streamIds)]])).rows)
      out.set(row.stream_id, row.version);
    return out;
  }

  /** See `sql.horizon`: must run in its own statement, before the read that uses it. */
  private async horizon(): Promise<string> {
    return (await this.pool.query<{ horizon: string }>(sql.horizon)).rows[0].horizon;
  }

  async readAll(from: GlobalPosition = START, limit = 1000): Promise<RecordedEvent[]> {
    const horizon = await this.horizon();
    const result = await this.pool.query<EventRow>(sql.readAll, [from.tx.toString(), from.pos.toString(), limit, horizon]);
    return result.rows.map(toRecorded);
  }

  async readLast(limit: number): Promise<RecordedEvent[]> {
    const horizon = await this.horizon();
    const result = await this.pool.query<EventRow>(sql.readLast, [limit, horizon]);
    return result.rows.map(toRecorded).reverse();
  }

  async readAllInTransaction(tx: TransactionContext, from: GlobalPosition, limit: number): Promise<RecordedEvent[]> {
    const result = await tx.query(sql.readAllInSnapshot, [from.tx.toString(), from.pos.toString(), limit]);
    return (result.rows as EventRow[]).map(toRecorded);
  }

  async headPosition(): Promise<GlobalPosition> {
    const horizon = await this.horizon();
    const result = await this.pool.query<{ tx_text: string; position: string }>(sql.head, [horizon]);
    const row = result.rows[0];
    return row ? { tx: BigInt(row.tx_text), pos: BigInt(row.position) } : START;
  }

  /**
   * The head once every event writer running at the call has finished, so it
   * covers every event committed before the call, even one that committed
   * behind a writer with a smaller transaction id.
   */
  async settledHead(): Promise<GlobalPosition> {
    const next = BigInt((await this.pool.query<{ next: string }>(sql.nextTransactionId)).rows[0].next);
    for (let wait = 5; BigInt(await this.horizon()) < next; wait = Math.min(wait * 2, 100)) await sleep(wait);
    return this.headPosition();
  }

  async countAfter(from: GlobalPosition, filter: CountFilter = {}): Promise<number> {
    const horizon = await this.horizon();
    const result = await this.pool.query<{ count: string }>(sql.countAfter, [
      from.tx.toString(),
      from.pos.toString(),
      horizon,
      filter.types ? [...filter.types] : null,
      filter.upTo ? filter.upTo.tx.toString() : null,
      filter.upTo ? filter.upTo.pos.toString() : null,
    ]);
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
   * other processes by a NOTIFY sent after the commit, at most one per
   * NOTIFY_SPACING_MS (a burst of appends shares one). NOTIFY inside the append
   * would serialize concurrent commits on the notification queue lock. Losing
   * it (crash right after commit) costs readers one poll interval, nothing more.
   */
  private announce(): void {
    for (const notify of this.localWatchers) notify();
    this.notifyWanted = true;
    if (this.notifying) return;
    this.notifying = (async () => {
      while (this.notifyWanted) {
        const wait = this.lastNotifyAt + NOTIFY_SPACING_MS - Date.now();
        if (wait > 0) await sleep(wait);
        this.notifyWanted = false;
        this.lastNotifyAt = Date.now();
        await this.pool.query(sql.notify, [EVENTS_CHANNEL]).catch((err) => this.log.warn({ err }, 'NOTIFY failed; readers will poll'));
      }
    })().finally(() => {
      this.notifying = undefined;
    });
  }

  subscribeAll(handler: (event: RecordedEvent) => Promise<void> | void, options: SubscribeOptions = {}): Subscription {
    return subscribeByPolling(this, handler, options, this.pollIntervalMs, this.log);
  }

  async close(): Promise<void> {
    // The pool and listener belong to the caller; only a NOTIFY in flight is ours.
    await this.notifying;
  }
}

interface PreparedAppend {
  ordered: StreamWrite[];
  flat: StreamWrite['events'][number][];
  /** Runs the append on the pool (autocommitted) or in a caller's transaction; the rows written, in the order sent. */
  write(db: Queryable): Promise<AppendedRow[]>;
  toWritten(rows: AppendedRow[]): RecordedEvent[];
}

/** One append's statement (the one-stream exact-version statement, else `event_store_append`), and how to read its rows back. */
function prepareAppend(writes: readonly StreamWrite[], metadata: EventMetadata): PreparedAppend {
  // Streams are locked in a fixed order so that two multi-stream appends over the
  // same streams cannot deadlock.
  const ordered = [...writes].sort((a, b) => (a.streamId < b.streamId ? -1 : a.streamId > b.streamId ? 1 : 0));
  for (let i = 1; i < ordered.length; i++) {
    if (ordered[i].streamId === ordered[i - 1].streamId) throw new Error(`stream ${ordered[i].streamId} appears twice in one append`);
  }
  const flat = ordered.flatMap((w) => w.events);
  const data = jsonBatch(flat.map((e) => e.data));
  const metadataText = JSON.stringify({ ...metadata, recordedAt: metadata.recordedAt ?? new Date().toISOString() });
  const ids = flat.map((e) => e.id ?? null);
  const types = flat.map((e) => e.type);
  const general = async (db: Queryable) =>
    (
      await db.query<AppendedRow>({
        name: sql.APPEND_STATEMENT,
        text: sql.append,
        values: [
          ordered.map((w) => w.streamId),
          ordered.map((w) => String(w.expected)),
          ordered.map((w) => w.events.length),
          ids,
          types,
          data.bytes,
          metadataText,
          data.offsets,
          data.lengths,
        ],
      })
    ).rows;
  const only = ordered.length === 1 ? ordered[0] : undefined;
  const write =
    only && typeof only.expected === 'number' && only.events.length > 0
      ? async (db: Queryable) => {
          const rows = (
            await db.query<AppendedRow>({
              name: sql.APPEND_TO_VERSION_STATEMENT,
              text: sql.appendToVersion,
              values: [only.streamId, only.expected, only.events.length, ids, types, data.bytes, metadataText, data.offsets, data.lengths],
            })
          ).rows;
          // Nothing written: not the expected version. The general append raises the conflict with what is there.
          return rows.length > 0 ? rows : general(db);
        }
      : general;
  // The statement returns the written rows in the order they were sent (stream by stream, in order).
  const toWritten = (rows: AppendedRow[]): RecordedEvent[] => {
    if (rows.length !== flat.length) throw new Error(`append wrote ${rows.length} events, expected ${flat.length}`);
    const meta = JSON.parse(metadataText) as EventMetadata;
    const streams = ordered.flatMap((w) => w.events.map(() => w.streamId));
    return rows.map((row, i) => {
      if (row.stream_id !== streams[i] || row.type !== flat[i].type)
        throw new Error(`append returned ${row.stream_id}/${row.type} where ${streams[i]}/${flat[i].type} was sent`);
      // The writer's data objects, not a JSON round trip of them: event data is JSON values (`NewEvent`), so a
      // reader gets the same; parsing 10,000 desired states back took 0.8 s of a fleet-wide write (bench fleet-scale).
      return toRecorded({ ...row, data: flat[i].data ?? null, metadata: meta });
    });
  };
  return { ordered, flat, write, toWritten };
}

/** Each written stream's version: its last new event's, or for a pure guard what it was checked to be. */
async function versionsAfter(db: Queryable, writes: readonly StreamWrite[], events: readonly RecordedEvent[]): Promise<Record<string, number>> {
  const versions: Record<string, number> = {};
  for (const e of events) versions[e.streamId] = Math.max(versions[e.streamId] ?? -1, e.version);
  const lookUp: string[] = [];
  for (const w of writes.filter((w) => w.events.length === 0)) {
    if (typeof w.expected === 'number') versions[w.streamId] = w.expected;
    else if (w.expected === 'no_stream') versions[w.streamId] = -1;
    else lookUp.push(w.streamId);
  }
  if (lookUp.length > 0) {
    const rows = (await db.query<{ stream_id: string; version: number }>(sql.streamVersions, [lookUp])).rows;
    for (const id of lookUp) versions[id] = rows.find((r) => r.stream_id === id)?.version ?? -1;
  }
  return versions;
}

/** The append function's ES409 as the port's typed conflict; anything else unchanged. */
function asConflict(err: unknown, writes: readonly StreamWrite[]): unknown {
  const pgErr = err as { code?: string; detail?: string };
  if (pgErr?.code !== 'ES409' || !pgErr.detail) return err;
  const detail = JSON.parse(pgErr.detail) as { stream: string; actual: number | null };
  const write = writes.find((w) => w.streamId === detail.stream);
  return new WrongExpectedVersion(detail.stream, write?.expected ?? 'any', detail.actual ?? 'no_stream');
}
