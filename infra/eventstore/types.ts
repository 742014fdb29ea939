/**
 * The event store port. Two adapters implement it (PostgreSQL, KurrentDB) and one
 * contract suite (spec/infra/eventstore) holds both to the same behaviour.
 */

/** What a writer expects of a stream before its append. */
export type ExpectedVersion = 'no_stream' | 'exists' | 'any' | number;

/**
 * Who caused an event and why; recorded with every event. Values are strings:
 * KurrentDB's multi-stream append accepts nothing else in metadata.
 */
export interface EventMetadata {
  actor: string;
  requestId?: string;
  clientAddress?: string;
  causationId?: string;
  correlationId?: string;
  /** ISO time the command was decided at (from the command, not the clock of the store). */
  recordedAt?: string;
}

export interface NewEvent<Type extends string = string, Data = unknown> {
  type: Type;
  /**
   * JSON values only (plain objects, arrays, strings, finite numbers, booleans,
   * null; no `undefined` members, dates or class instances): what a reader gets
   * back is this, and inline handlers are given these objects as written.
   */
  data: Data;
  /** A UUID naming this event; made by the store when absent. Causation ids point at it. */
  id?: string;
}

export interface StreamWrite {
  streamId: string;
  expected: ExpectedVersion;
  events: readonly NewEvent[];
}

/**
 * A place in the global order. On PostgreSQL the order is (transaction id, row
 * position); on KurrentDB it is ($all commit, prepare). Compare with `comparePositions`.
 */
export interface GlobalPosition {
  readonly tx: bigint;
  readonly pos: bigint;
}

export const START: GlobalPosition = Object.freeze({ tx: 0n, pos: 0n });

export function comparePositions(a: GlobalPosition, b: GlobalPosition): number {
  if (a.tx !== b.tx) return a.tx < b.tx ? -1 : 1;
  if (a.pos !== b.pos) return a.pos < b.pos ? -1 : 1;
  return 0;
}

export function formatPosition(p: GlobalPosition): string {
  return `${p.tx}/${p.pos}`;
}

export function parsePosition(text: string): GlobalPosition {
  const match = /^(\d+)\/(\d+)$/.exec(text);
  if (!match) throw new Error(`invalid position ${text}`);
  return { tx: BigInt(match[1]), pos: BigInt(match[2]) };
}

export interface RecordedEvent<Type extends string = string, Data = unknown> {
  /** UUID of the event (KurrentDB event id; a column of its own on PostgreSQL). */
  id: string;
  streamId: string;
  /** 0-based version of the event inside its stream. */
  version: number;
  type: Type;
  data: Data;
  metadata: EventMetadata;
  position: GlobalPosition;
  recordedAt: Date;
}

/** What folding a stream reads of an event. */
export type StreamEventData = Pick<RecordedEvent, 'version' | 'type' | 'data'>;

export interface AppendResult {
  /** Next expected version of each written stream (the version of its last event). */
  versions: Record<string, number>;
  events: RecordedEvent[];
}

/** Work run inside the append's transaction, after its events are written (inline projections). */
export type InlineHandler = (tx: TransactionContext, events: readonly RecordedEvent[]) => Promise<void>;

/** The handle inline work gets: a SQL client bound to the append's transaction. */
export interface TransactionContext {
  query(text: string, values?: unknown[]): Promise<{ rows: any[]; rowCount: number | null }>;
}

export interface SubscribeOptions {
  from?: GlobalPosition;
  batchSize?: number;
  /** Called for errors the subscription recovers from (it retries with backoff). */
  onError?: (err: unknown) => void;
}

export interface Subscription {
  /** Stops delivery; resolves once the handler is no longer running. */
  stop(): Promise<void>;
  /** Position of the last event the handler finished. */
  readonly position: GlobalPosition;
}

export interface CountFilter {
  types?: readonly string[];
  upTo?: GlobalPosition;
}

export interface EventStore {
  append(writes: readonly StreamWrite[], metadata: EventMetadata): Promise<AppendResult>;
  readStream(streamId: string, options?: { fromVersion?: number }): Promise<RecordedEvent[]>;
  /** Version of the stream's last event; -1 when the stream does not exist. Reads no events. */
  streamVersion(streamId: string): Promise<number>;
  /**
   * `readStream` of many streams in one read (one statement on PostgreSQL, so a
   * write over the whole fleet does not make a round trip per stream): each
   * stream's events from its `fromVersion`, in version order, under its id
   * (every id asked for is there; [] when it has none or does not exist).
   */
  readStreams(fromVersions: ReadonlyMap<string, number>): Promise<Map<string, RecordedEvent[]>>;
  /**
   * `readStreams` with only what a fold reads of each event. Optional: without
   * it, `readStreams` serves. On PostgreSQL the first fleet-wide write after a
   * start reads every node stream (310,000 events at 10,000 nodes), and decoding
   * the rest of each row (metadata, time, id, position) cost about as much as
   * its data.
   */
  readStreamsData?(fromVersions: ReadonlyMap<string, number>): Promise<Map<string, StreamEventData[]>>;
  /** `streamVersion` of many streams in one read: every id asked for, -1 for one that does not exist. */
  streamVersions(streamIds: readonly string[]): Promise<Map<string, number>>;
  /** Events after `from` in global order, at most `limit`, only those whose transactions are proven committed. */
  readAll(from?: GlobalPosition, limit?: number): Promise<RecordedEvent[]>;
  /** The newest `limit` deliverable events, in global order (oldest of them first). */
  readLast(limit: number): Promise<RecordedEvent[]>;
  /** Catch-up from `from`, then live delivery; the handler sees each event once, in order. */
  subscribeAll(handler: (event: RecordedEvent) => Promise<void> | void, options?: SubscribeOptions): Subscription;
  /** Position of the newest event that `readAll` can deliver now. */
  headPosition(): Promise<GlobalPosition>;
  /** A head that covers every event committed before the call (may wait for writers in flight). */
  settledHead(): Promise<GlobalPosition>;
  /**
   * How many deliverable events lie after `from` (null when the backend cannot tell
   * cheaply); with `types`, only events of those types; with `upTo`, only events at or
   * before that position.
   */
  countAfter(from: GlobalPosition, filter?: CountFilter): Promise<number | null>;
  /** Calls `notify` whenever new events may be there (a hint: also poll); returns its removal. */
  watch(notify: () => void): () => void;
  /**
   * True when `onAppend` handlers run inside the append's own transaction
   * (PostgreSQL). Otherwise inline projections run in the runner.
   */
  readonly transactional: boolean;
  /**
   * Registers work run inside each append's transaction (PostgreSQL backend
   * only). With `types`, only appends carrying one of those event types open a
   * transaction for it; others are written in one autocommitted statement.
   */
  onAppend(handler: InlineHandler, types?: readonly string[]): void;
  /**
   * Transactional stores only: every committed event after `from` as the given
   * transaction sees them, without the in-flight guard (for rebuilding inline
   * projections under their table locks).
   */
  readAllInTransaction?(tx: TransactionContext, from: GlobalPosition, limit: number): Promise<RecordedEvent[]>;
  /**
   * Stores with writer locks only (PostgreSQL): runs `work` in one transaction
   * that first takes `locks` (waiting for their holders, in this and in other
   * processes), so writers of one stream take turns instead of failing on each
   * other's versions. The locks are held until the transaction ends; an append
   * made through the session commits with them. Absent on KurrentDB, where
   * writers stay optimistic (expected versions and retries).
   */
  withWriteLocks?<T>(locks: readonly WriteLock[], work: (session: WriteSession) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/**
 * A lock a writer holds from before it reads until its append commits: a stream
 * id, or a wider name (`$fleet`). Shared holders of one name do not wait for
 * each other; an exclusive holder waits for all of them and they for it.
 */
export interface WriteLock {
  name: string;
  shared?: boolean;
}

/** The transaction of `withWriteLocks`. */
export interface WriteSession {
  /**
   * Takes more exclusive locks without waiting. False when another writer holds
   * one of them: the caller then ends this transaction and starts again with
   * those locks among the first ones (taking them late could deadlock).
   */
  tryLock(names: readonly string[]): Promise<boolean>;
  /** `EventStore.append` inside this transaction (with its inline handlers); committed when `work` returns. */
  append(writes: readonly StreamWrite[], metadata: EventMetadata): Promise<AppendResult>;
  /** Queries in this transaction: after `append`, the read models as this append left them. */
  readonly tx: TransactionContext;
}

/** A stream did not have the version the writer expected. Nothing of the append was written. */
export class WrongExpectedVersion extends Error {
  constructor(
    readonly streamId: string,
    readonly expected: ExpectedVersion,
    readonly actual: number | 'no_stream',
  ) {
    super(`stream ${streamId}: expected version ${expected}, found ${actual}`);
    this.name = 'WrongExpectedVersion';
  }
}
