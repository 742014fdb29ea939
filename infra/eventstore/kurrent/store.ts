import {
  BACKWARDS,
  END,
  FORWARDS,
  KurrentDBClient,
  START as CLIENT_START,
  excludeSystemEvents,
  jsonEvent,
  type AllStreamResolvedEvent,
  type AllStreamSubscription,
  type EventData,
  type JSONType,
  type ReadPosition,
} from '@kurrent/kurrentdb-client';
import type { Logger } from '../../logger.js';
import { subscribeByPolling } from '../subscription.js';
import {
  START,
  WrongExpectedVersion,
  comparePositions,
  type AppendResult,
  type EventMetadata,
  type EventStore,
  type CountFilter,
  type GlobalPosition,
  type InlineHandler,
  type NewEvent,
  type RecordedEvent,
  type StreamWrite,
  type SubscribeOptions,
  type Subscription,
} from '../types.js';
import {
  fromCurrentState,
  isAfter,
  isDeliverable,
  isStreamNotFound,
  mapAppendError,
  redactConnectionString,
  satisfies,
  toAppendState,
  toGlobalPosition,
  toReadPosition,
  toRecordedEvent,
  toStoredMetadata,
} from './mapping.js';

export interface KurrentEventStoreOptions {
  /** How long `connect` waits for the first read of $all before giving up. */
  connectTimeoutMs?: number;
  /** Poll interval of subscriptions (the live $all subscription wakes them sooner). */
  pollIntervalMs?: number;
}

const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;

/**
 * The KurrentDB / EventStoreDB event store (server 25.1+ for multi-stream appends).
 *
 * - Appends: one write goes through `appendToStream`, several through the
 *   atomic `multiStreamAppend`; a version conflict anywhere writes nothing.
 * - Global order: $all, positions {tx: commit, pos: prepare}. $all only ever
 *   shows committed events in log order, so "strictly after the last position
 *   handled" never skips one. System events ($-types, $-streams) are left out.
 * - Not transactional: inline projections run in the projection runner.
 */
export class KurrentEventStore implements EventStore {
  readonly transactional = false;

  private readonly watchers = new Set<() => void>();
  private live: AllStreamSubscription | undefined;
  private liveRetry: NodeJS.Timeout | undefined;
  private liveFailures = 0;
  private closed = false;
  private readonly pollIntervalMs: number;

  private constructor(
    private readonly client: KurrentDBClient,
    private readonly log: Logger,
    options: KurrentEventStoreOptions,
  ) {
    this.pollIntervalMs = options.pollIntervalMs ?? 1000;
  }

  /**
   * Connects and proves the server answers by reading the head of $all once,
   * within `connectTimeoutMs`: a wrong or unreachable `EVENTSTORE_URL` fails the
   * start with a message instead of hanging.
   */
  static async connect(url: string, log: Logger, options: KurrentEventStoreOptions = {}): Promise<KurrentEventStore> {
    const where = redactConnectionString(url);
    let client: KurrentDBClient;
    try {
      client = KurrentDBClient.connectionString(url);
    } catch (err) {
      throw new Error(`EVENTSTORE_URL: invalid KurrentDB connection string ${where}: ${messageOf(err)}`, { cause: err });
    }
    const store = new KurrentEventStore(client, log, options);
    const timeoutMs = options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
    try {
      await withTimeout(store.probe(timeoutMs), timeoutMs, `no answer within ${timeoutMs} ms`);
    } catch (err) {
      await client.dispose().catch(() => {});
      throw new Error(`EVENTSTORE_URL: cannot read $all from KurrentDB at ${where}: ${messageOf(err)}`, { cause: err });
    }
    log.info({ eventstore: where }, 'connected to KurrentDB');
    return store;
  }

  private async probe(deadline: number): Promise<void> {
    for await (const _ of this.client.readAll({ direction: BACKWARDS, fromPosition: END, maxCount: 1, deadline })) break;
  }

  onAppend(_handler: InlineHandler): void {
    throw new Error(
      'KurrentDB event store: inline handlers (onAppend) need a transactional store (PostgreSQL); on KurrentDB inline projections run in the projection runner',
    );
  }

  async append(writes: readonly StreamWrite[], metadata: EventMetadata): Promise<AppendResult> {
    const seen = new Set<string>();
    for (const w of writes) {
      if (seen.has(w.streamId)) throw new Error(`stream ${w.streamId} appears twice in one append`);
      seen.add(w.streamId);
    }
    if (writes.length === 0) return { versions: {}, events: [] };
    const meta = toStoredMetadata(metadata);
    const toData = (event: NewEvent): EventData =>
      jsonEvent({ ...(event.id ? { id: event.id } : {}), type: event.type, data: (event.data ?? null) as JSONType, metadata: meta });

    if (writes.length === 1) {
      const write = writes[0];
      if (write.events.length === 0) return this.guard(write);
      let last: number;
      try {
        const result = await this.client.appendToStream(write.streamId, write.events.map(toData), {
          streamState: toAppendState(write.expected),
        });
        if (!result.success) {
          // Only with throwOnAppendFailure=false in the connection string.
          throw new WrongExpectedVersion(write.streamId, write.expected, fromCurrentState(result.nextExpectedRevision));
        }
        last = Number(result.nextExpectedRevision);
      } catch (err) {
        throw mapAppendError(err, writes);
      }
      const events = await this.readWritten(write.streamId, last, write.events.length);
      return { versions: { [write.streamId]: last }, events };
    }

    const empty = writes.find((w) => w.events.length === 0);
    if (empty) {
      throw new Error(
        `KurrentDB event store: stream ${empty.streamId} has no events in a multi-stream append; a pure version guard is not atomic with multiStreamAppend`,
      );
    }
    const versions: Record<string, number> = {};
    try {
      const result = await this.client.multiStreamAppend(
        writes.map((w) => ({ streamName: w.streamId, expectedState: toAppendState(w.expected), events: w.events.map(toData) })),
      );
      for (const response of result.responses) versions[response.streamName] = Number(response.revision);
    } catch (err) {
      throw mapAppendError(err, writes);
    }
    const events: RecordedEvent[] = [];
    for (const write of writes) {
      const last = versions[write.streamId] ?? (await this.lastVersion(write.streamId, true));
      versions[write.streamId] = typeof last === 'number' ? last : -1;
      events.push(...(await this.readWritten(write.streamId, versions[write.streamId], write.events.length)));
    }
    events.sort((a, b) => comparePositions(a.position, b.position));
    return { versions, events };
  }

  /** An append without events: only checks the stream (nothing is written, so nothing to keep atomic). */
  private async guard(write: StreamWrite): Promise<AppendResult> {
    const actual = await this.lastVersion(write.streamId, true);
    if (!satisfies(write.expected, actual)) throw new WrongExpectedVersion(write.streamId, write.expected, actual);
    return { versions: { [write.streamId]: actual === 'no_stream' ? -1 : actual }, events: [] };
  }

  async streamVersion(streamId: string): Promise<number> {
    const version = await this.lastVersion(streamId, true);
    return version === 'no_stream' ? -1 : version;
  }

  /** No multi-stream read in KurrentDB: one read per stream, in turn. */
  async streamVersions(streamIds: readonly string[]): Promise<Map<string, number>> {
    const out = new Map<string, number>();
    for (const id of streamIds) out.set(id, await this.streamVersion(id));
    return out;
  }

  private async lastVersion(streamId: string, requiresLeader: boolean): Promise<number | 'no_stream'> {
    try {
      for await (const resolved of this.client.readStream(streamId, { direction: BACKWARDS, fromRevision: END, maxCount: 1, requiresLeader })) {
        if (resolved.event) return Number(resolved.event.revision);
      }
    } catch (err) {
      if (isStreamNotFound(err)) return 'no_stream';
      throw err;
    }
    return 'no_stream';
  }

  /**
   * The events an append just wrote (versions last-count+1..last), read back from
   * the leader for their $all positions and server timestamps: the append
   * responses carry one position for the whole write, not one per event.
   */
  private async readWritten(streamId: string, last: number, count: number): Promise<RecordedEvent[]> {
    const out: RecordedEvent[] = [];
    const first = last - count + 1;
    for await (const resolved of this.client.readStream(streamId, {
      direction: FORWARDS,
      fromRevision: BigInt(Math.max(0, first)),
      maxCount: count,
      requiresLeader: true,
    })) {
      if (resolved.event) out.push(toRecordedEvent(resolved.event));
    }
    return out;
  }

  async readStream(streamId: string, options: { fromVersion?: number } = {}): Promise<RecordedEvent[]> {
    const from = options.fromVersion ?? 0;
    const out: RecordedEvent[] = [];
    try {
      for await (const resolved of this.client.readStream(streamId, {
        direction: FORWARDS,
        fromRevision: from > 0 ? BigInt(from) : CLIENT_START,
      })) {
        if (resolved.event) out.push(toRecordedEvent(resolved.event));
      }
    } catch (err) {
      if (isStreamNotFound(err)) return [];
      throw err;
    }
    return out;
  }

  /** No multi-stream read in KurrentDB: one read per stream, in turn. */
  async readStreams(fromVersions: ReadonlyMap<string, number>): Promise<Map<string, RecordedEvent[]>> {
    const out = new Map<string, RecordedEvent[]>();
    for (const [id, fromVersion] of fromVersions) out.set(id, await this.readStream(id, { fromVersion }));
    return out;
  }

  /**
   * One page of $all, system event types filtered by the server
   * (`excludeSystemEvents`), `$` streams by `isDeliverable` afterwards.
   */
  private async readAllPage(fromPosition: ReadPosition, direction: typeof FORWARDS | typeof BACKWARDS, maxCount: number): Promise<AllStreamResolvedEvent[]> {
    const page: AllStreamResolvedEvent[] = [];
    for await (const resolved of this.client.readAll({ fromPosition, direction, maxCount, filter: excludeSystemEvents() })) page.push(resolved);
    return page;
  }

  async readAll(from: GlobalPosition = START, limit = 1000): Promise<RecordedEvent[]> {
    return this.scan(FORWARDS, from, limit);
  }

  async readLast(limit: number): Promise<RecordedEvent[]> {
    return (await this.scan(BACKWARDS, undefined, limit)).reverse();
  }

  /**
   * Up to `limit` deliverable events of $all strictly beyond `from` in
   * `direction` (from the end when reading backwards without a start), paging
   * past system events.
   */
  private async scan(direction: typeof FORWARDS | typeof BACKWARDS, from: GlobalPosition | undefined, limit: number): Promise<RecordedEvent[]> {
    const out: RecordedEvent[] = [];
    let cursor = from;
    const beyond = (position: GlobalPosition) => cursor === undefined || (direction === FORWARDS ? isAfter(position, cursor) : isAfter(cursor, position));
    while (out.length < limit) {
      // The server may or may not return the event at `cursor` itself: ask for one
      // more and keep only what lies strictly beyond it.
      const want = limit - out.length + 1;
      const page = await this.readAllPage(cursor ? toReadPosition(cursor) : END, direction, want);
      let moved = false;
      for (const resolved of page) {
        const event = resolved.event;
        if (!event) continue;
        const position = toGlobalPosition(event.position);
        if (!beyond(position)) continue;
        cursor = position;
        moved = true;
        if (isDeliverable(event)) {
          out.push(toRecordedEvent(event));
          if (out.length === limit) break;
        }
      }
      if (page.length < want || !moved) break;
    }
    return out;
  }

  /** $all is in commit order on KurrentDB: what is committed is already below the head. */
  async settledHead(): Promise<GlobalPosition> {
    return this.headPosition();
  }

  async headPosition(): Promise<GlobalPosition> {
    const [last] = await this.readLast(1);
    return last ? last.position : START;
  }

  /** KurrentDB cannot count $all cheaply. */
  async countAfter(_from: GlobalPosition, _filter?: CountFilter): Promise<number | null> {
    return null;
  }

  /**
   * One live $all subscription (from the end, system events filtered) shared by
   * every watcher; each event or reconnect calls them. Only a hint: readers still
   * read $all themselves, so a dropped subscription only delays them to their poll.
   */
  watch(notify: () => void): () => void {
    this.watchers.add(notify);
    this.ensureLive();
    return () => {
      this.watchers.delete(notify);
      if (this.watchers.size === 0) this.stopLive();
    };
  }

  private wakeAll(): void {
    for (const notify of [...this.watchers]) notify();
  }

  private ensureLive(): void {
    if (this.closed || this.live || this.liveRetry || this.watchers.size === 0) return;
    let sub: AllStreamSubscription;
    try {
      sub = this.client.subscribeToAll({ fromPosition: END, filter: excludeSystemEvents() });
    } catch (err) {
      this.liveFailed(undefined, err);
      return;
    }
    this.live = sub;
    sub.on('data', () => {
      this.liveFailures = 0;
      this.wakeAll();
    });
    sub.on('confirmation', () => {
      this.liveFailures = 0;
      // Events may have come while no subscription was up.
      this.wakeAll();
    });
    sub.on('caughtUp', () => this.wakeAll());
    sub.on('error', (err: Error) => this.liveFailed(sub, err));
    sub.on('end', () => this.liveFailed(sub, new Error('$all subscription ended')));
  }

  private liveFailed(sub: AllStreamSubscription | undefined, err: unknown): void {
    if (sub && this.live !== sub) return;
    this.live = undefined;
    if (sub) void sub.unsubscribe().catch(() => {});
    if (this.closed || this.watchers.size === 0) return;
    this.liveFailures += 1;
    this.log.warn({ err, failures: this.liveFailures }, 'KurrentDB $all subscription dropped; polling until it is back');
    const delay = Math.min(30_000, 100 * 2 ** Math.min(this.liveFailures, 8));
    this.liveRetry = setTimeout(() => {
      this.liveRetry = undefined;
      this.ensureLive();
      this.wakeAll();
    }, delay);
    this.liveRetry.unref?.();
  }

  private stopLive(): void {
    if (this.liveRetry) clearTimeout(this.liveRetry);
    this.liveRetry = undefined;
    const sub = this.live;
    this.live = undefined;
    if (sub) void sub.unsubscribe().catch(() => {});
  }

  /**
   * Catch-up then live, in order, each event once per position: pages of `readAll`
   * strictly after the last event the handler finished, woken by the live $all
   * subscription (or the poll interval). A failing handler is retried from the same
   * event; `stop()` keeps `position` for a later resume.
   */
  subscribeAll(handler: (event: RecordedEvent) => Promise<void> | void, options: SubscribeOptions = {}): Subscription {
    return subscribeByPolling(this, handler, options, this.pollIntervalMs, this.log);
  }

  async close(): Promise<void> {
    this.closed = true;
    this.watchers.clear();
    this.stopLive();
    await this.client.dispose();
  }
}

function messageOf(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const message = err.message && err.message !== err.name ? err.message : '';
  if (err.name === 'Error') return message || 'unknown error';
  return message ? `${err.name}: ${message}` : err.name;
}

function withTimeout<T>(promise: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(message)), ms);
  });
  promise.catch(() => {}); // a late failure after the timeout is already reported
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
