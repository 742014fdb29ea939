import { fold, type Decider, type DomainEvent } from '../domain/decider.js';
import { Conflict } from '../domain/errors.js';
import { pendingAuditWrite, type DecisionAudit } from './audit.js';
import {
  WrongExpectedVersion,
  type AppendResult,
  type EventMetadata,
  type EventStore,
  type RecordedEvent,
  type StreamEventData,
  type StreamWrite,
  type TransactionContext,
  type WriteLock,
} from '../infra/eventstore/types.js';

/** A stream as a command sees it: its events and the version to expect when appending. */
export interface LoadedStream<Event extends DomainEvent = DomainEvent> {
  streamId: string;
  events: Event[];
  recorded: RecordedEvent[];
  /** -1 when the stream does not exist. */
  version: number;
}

export interface Decision {
  /**
   * Events per stream; streams not named are left alone. A write with no events
   * is dropped, unless it is a `guard`: then the append still checks that the
   * stream is at the version the decision read, so a decision may depend on a
   * stream it does not change.
   */
  writes: { streamId: string; events: readonly DomainEvent[]; guard?: boolean }[];
  /** How the append's audit entry reads, for a request that is audited (`commands/audit.ts`). */
  audit?: DecisionAudit;
}

export interface RetryOptions {
  /** How many times a version conflict is retried before giving up with 409. */
  attempts?: number;
}

/** How `execute` serialises a write with others (stores with writer locks: PostgreSQL), and what it reads back. */
export interface ExecuteOptions<T, A> extends RetryOptions {
  /**
   * What the write holds from before it reads until its append commits. Default:
   * each of `streamIds`, exclusive. Writers holding a lock in common take turns.
   */
  locks?: readonly WriteLock[];
  /**
   * Default true: every stream the decision appends to or guards (exact version)
   * must be locked too when it appends. Those found only while deciding are
   * tried then without waiting; when one is busy, the write starts over holding
   * them from the start. False: `locks` cover those streams (a fleet-wide
   * lock), and they stay optimistic (checked by version).
   */
  lockWritten?: boolean;
  /**
   * Reads the answer inside the append's transaction, after the append (or with
   * no append): the read models as this write left them, whatever commits next.
   * Called only on stores with writer locks; elsewhere `answered` is absent and
   * the caller reads after commit.
   */
  answer?: (tx: TransactionContext, result: T) => Promise<A>;
}

export interface Executed<T, A> {
  result: T;
  append: AppendResult;
  /** What `answer` read in the append's transaction (absent when it was not called). */
  answered?: { value: A };
}

const DEFAULT_ATTEMPTS = 30;
const NOTHING_APPENDED: AppendResult = { versions: {}, events: [] };

/** A stream to write was locked by another writer when this one found it needed it. */
class LockLater extends Error {
  constructor(readonly streams: readonly string[]) {
    super('writer locks to take from the start');
  }
}

/**
 * Loads the streams, lets `decide` turn them into writes, and appends every write
 * with the version it was decided on. On a store with writer locks (PostgreSQL)
 * the write first locks its streams, so concurrent writers of a stream wait for
 * each other instead of failing; every other stream it appends to or guards is
 * locked before the append (see `ExecuteOptions.lockWritten`). A writer that
 * takes no locks (KurrentDB, a plain `store.append`) makes the append fail as a
 * whole; then everything is loaded and decided again.
 */
export async function execute<T, A = never>(
  store: EventStore,
  streamIds: readonly string[],
  decide: (streams: Record<string, LoadedStream>, more: LoadMore) => Promise<Decision & { result: T }> | (Decision & { result: T }),
  metadata: EventMetadata,
  options: ExecuteOptions<T, A> = {},
): Promise<Executed<T, A>> {
  const attempts = options.attempts ?? DEFAULT_ATTEMPTS;
  const baseLocks = options.locks ?? streamIds.map((name): WriteLock => ({ name }));
  const learned = new Set<string>();
  const answer = async (tx: TransactionContext, result: T): Promise<{ answered?: { value: A } }> =>
    options.answer ? { answered: { value: await options.answer(tx, result) } } : {};
  for (let attempt = 1; ; attempt++) {
    try {
      if (!store.withWriteLocks) {
        const { decision, writes } = await decideOnce(store, streamIds, decide);
        if (!writes.some((w) => w.events.length > 0)) return { result: decision.result, append: NOTHING_APPENDED };
        // An audited request's entry commits with its write (commands/audit.ts).
        const audit = pendingAuditWrite(decision);
        const append = await store.append(audit ? [...writes, audit.write] : writes, metadata);
        return { result: decision.result, append: audit ? audit.carried(append) : append };
      }
      const locks = [...baseLocks, ...[...learned].map((name): WriteLock => ({ name }))];
      const done = await store.withWriteLocks(locks, async (session) => {
        const { decision, writes } = await decideOnce(store, streamIds, decide);
        if (options.lockWritten !== false) {
          const exact = writes.filter((w) => w.expected !== 'any').map((w) => w.streamId);
          if (!(await session.tryLock(exact))) throw new LockLater(exact);
        }
        if (!writes.some((w) => w.events.length > 0)) return { decision, append: NOTHING_APPENDED, answered: await answer(session.tx, decision.result) };
        // An audited request's entry commits with its write (commands/audit.ts); its stream is its own, no lock needed.
        const audit = pendingAuditWrite(decision);
        const append = await session.append(audit ? [...writes, audit.write] : writes, metadata);
        return { decision, append, audit, answered: await answer(session.tx, decision.result) };
      });
      // Committed: only now is the audit entry written.
      return { result: done.decision.result, append: done.audit ? done.audit.carried(done.append) : done.append, ...done.answered };
    } catch (err) {
      if (err instanceof LockLater) {
        for (const s of err.streams) learned.add(s);
        if (attempt < attempts) continue;
        throw new Conflict(`${err.streams[0] ?? 'a stream'} was modified concurrently; retry`);
      }
      if (!isRetryable(err) || attempt >= attempts) {
        if (err instanceof WrongExpectedVersion) throw new Conflict(`${err.streamId} was modified concurrently; retry`);
        throw err;
      }
      if (err instanceof WrongExpectedVersion) learned.add(err.streamId);
      await new Promise((res) => setTimeout(res, Math.random() * Math.min(50, 2 * attempt)));
    }
  }
}

/** One load-and-decide pass: the decision's result and its writes with the versions it read. */
async function decideOnce<T>(
  store: EventStore,
  streamIds: readonly string[],
  decide: (streams: Record<string, LoadedStream>, more: LoadMore) => Promise<Decision & { result: T }> | (Decision & { result: T }),
): Promise<{ decision: Decision & { result: T }; writes: StreamWrite[] }> {
  const loaded: Record<string, LoadedStream> = {};
  for (const stream of await loadMany(store, streamIds)) loaded[stream.streamId] = stream;
  // Loaded already as far as `how` needs (a stream loaded for its version only has no events yet).
  const known = (streamId: string, how: 'events' | 'version') => {
    const stream = loaded[streamId];
    return stream && (how === 'version' || stream.events.length > 0 || stream.version < 0) ? stream : undefined;
  };
  const one = async (streamId: string, how: 'events' | 'version' = 'events') =>
    known(streamId, how) ?? (loaded[streamId] = how === 'version' ? await loadVersion(store, streamId) : await load(store, streamId));
  const many = async (ids: readonly string[], how: 'events' | 'version' = 'events') => {
    const missing = [...new Set(ids.filter((id) => !known(id, how)))];
    const fresh = how === 'version' ? await loadVersions(store, missing) : await loadMany(store, missing);
    for (const stream of fresh) loaded[stream.streamId] = stream;
    return ids.map((id) => loaded[id]);
  };
  const folded = async <E extends DomainEvent, S>(ids: readonly string[], decider: FoldOf<E, S>) => {
    const out = await loadFolded(store, ids, decider);
    // Known for its version (guards and appends expect it), not for its events: `more` reads those if asked.
    for (const { stream } of out) if (!loaded[stream.streamId]) loaded[stream.streamId] = stream;
    return out.map(({ stream, state }) => ({ stream: loaded[stream.streamId], state }));
  };
  const more: LoadMore = Object.assign(one, { many, folded });
  const decision = await decide(loaded, more);
  const writes = decision.writes
    .filter((w) => w.events.length > 0 || w.guard)
    .map((w) => ({
      streamId: w.streamId,
      expected: expectedOf(loaded[w.streamId] ?? missing(w.streamId)),
      events: w.events,
    }));
  return { decision, writes };
}

/** One stream, one decider: load, fold, decide, append with the expected version. */
export async function handleCommand<Command, Event extends DomainEvent, State>(
  store: EventStore,
  streamId: string,
  decider: Decider<Command, Event, State>,
  command: Command,
  metadata: EventMetadata,
  options: RetryOptions = {},
): Promise<{ events: Event[]; state: State; version: number }> {
  const { result } = await execute(
    store,
    [streamId],
    (streams) => {
      const stream = streams[streamId] as LoadedStream<Event>;
      const state = fold(decider, stream.events);
      const events = decider.decide(command, state);
      const next = events.reduce(decider.evolve, state);
      return { writes: [{ streamId, events }], result: { events, state: next, version: stream.version + events.length } };
    },
    metadata,
    options,
  );
  return result;
}

/**
 * Loads another stream while deciding (the decision found out it needs it). Its
 * version is checked at append time like the others when the decision writes to
 * it or guards it. `version` loads only the version, for streams the decision
 * appends to without reading (e.g. generation numbering).
 */
export interface LoadMore {
  (streamId: string, how?: 'events' | 'version'): Promise<LoadedStream>;
  /**
   * The same for many streams, in the order given, with those not loaded yet
   * read in one go (one statement on PostgreSQL): a write over hundreds of
   * nodes makes no round trip per stream.
   */
  many(streamIds: readonly string[], how?: 'events' | 'version'): Promise<LoadedStream[]>;
  /**
   * Many streams folded by `decider`, in the order given, with one read of only
   * the events after each stream's last fold (`loadFolded`): a write over
   * thousands of nodes neither reads nor folds their whole streams again. Each
   * stream counts as loaded at its version (the append checks it); its events
   * are read only if asked for through `more`.
   */
  folded<E extends DomainEvent, S>(streamIds: readonly string[], decider: FoldOf<E, S>): Promise<{ stream: LoadedStream; state: S }[]>;
}

/** What folding a stream needs of its decider. */
export type FoldOf<E extends DomainEvent, S> = Pick<Decider<unknown, E, S>, 'initialState' | 'evolve'>;

/** `more` telling `seen` of every stream it is asked for (to guard the node streams a decision read). */
export function observedLoads(more: LoadMore, seen: (streamId: string) => void): LoadMore {
  const one = (streamId: string, how?: 'events' | 'version') => {
    seen(streamId);
    return more(streamId, how);
  };
  const many = (streamIds: readonly string[], how?: 'events' | 'version') => {
    for (const streamId of streamIds) seen(streamId);
    return more.many(streamIds, how);
  };
  const folded = <E extends DomainEvent, S>(streamIds: readonly string[], decider: FoldOf<E, S>) => {
    for (const streamId of streamIds) seen(streamId);
    return more.folded(streamIds, decider);
  };
  return Object.assign(one, { many, folded });
}

async function loadVersion(store: EventStore, streamId: string): Promise<LoadedStream> {
  return { streamId, recorded: [], events: [], version: await store.streamVersion(streamId) };
}

async function loadVersions(store: EventStore, streamIds: readonly string[]): Promise<LoadedStream[]> {
  if (streamIds.length === 0) return [];
  const versions = await store.streamVersions(streamIds);
  return streamIds.map((streamId) => ({ streamId, recorded: [], events: [], version: versions.get(streamId)! }));
}

/**
 * Events already read, per store and stream. A stream's events never change once
 * written, so a cached prefix stays true; each load reads only what came after
 * it. Bounded: the least recently loaded streams are forgotten first.
 */
const readCache = new WeakMap<EventStore, Map<string, RecordedEvent[]>>();
const CACHED_STREAMS = 2000;

/** Each stream's events, reading from the store only what came after the cached prefix (one read for all). */
async function readThrough(store: EventStore, streamIds: readonly string[]): Promise<RecordedEvent[][]> {
  let streams = readCache.get(store);
  if (!streams) readCache.set(store, (streams = new Map()));
  const cache = streams;
  const known = streamIds.map((id) => cache.get(id) ?? []);
  const fromVersions = new Map(streamIds.map((id, i) => [id, known[i].length]));
  const fresh =
    streamIds.length === 1
      ? new Map([[streamIds[0], await store.readStream(streamIds[0], { fromVersion: known[0].length })]])
      : await store.readStreams(fromVersions);
  return streamIds.map((streamId, i) => {
    const more = fresh.get(streamId) ?? [];
    // A stream's versions are 0, 1, 2, ...; anything else (a store that numbers differently) is not cached.
    const all = more.length === 0 ? known[i] : known[i].concat(more);
    cache.delete(streamId);
    if (all.every((e, v) => e.version === v)) {
      cache.set(streamId, all);
      if (cache.size > CACHED_STREAMS) cache.delete(cache.keys().next().value!);
    }
    return all;
  });
}

/**
 * Folded states, per store, decider and stream: the state after the stream's
 * events up to `version`. Events never change once written and states are never
 * changed in place (`evolve` returns a new one), so a cached state plus the
 * events after it is the whole stream folded. Bounded like `readCache`; sized
 * for a fleet-wide write over 10,000 nodes, whose streams do not fit `readCache`
 * (at 2,000 streams it read and folded every node's whole stream on each such
 * write: some 300,000 rows). A state shares its records with the events it was
 * folded from, so holding it costs less than holding the events.
 */
const foldCache = new WeakMap<EventStore, WeakMap<object, Map<string, { version: number; state: unknown }>>>();
const FOLDED_STREAMS = 20_000;

/** Each stream folded by `decider`, reading from the store only the events after its cached fold (one read for all). */
export async function loadFolded<E extends DomainEvent, S>(
  store: EventStore,
  streamIds: readonly string[],
  decider: FoldOf<E, S>,
): Promise<{ stream: LoadedStream; state: S }[]> {
  if (streamIds.length === 0) return [];
  let byDecider = foldCache.get(store);
  if (!byDecider) foldCache.set(store, (byDecider = new WeakMap()));
  let cache = byDecider.get(decider);
  if (!cache) byDecider.set(decider, (cache = new Map()));
  const folds = cache;
  const known = streamIds.map((id) => folds.get(id));
  const fromVersions = new Map(streamIds.map((id, i) => [id, (known[i]?.version ?? -1) + 1]));
  const fresh: Map<string, StreamEventData[]> = await (store.readStreamsData ? store.readStreamsData(fromVersions) : store.readStreams(fromVersions));
  const out: { stream: LoadedStream; state: S }[] = [];
  for (const [i, streamId] of streamIds.entries()) {
    let tail = fresh.get(streamId) ?? [];
    let base = known[i];
    // A stream's versions are 0, 1, 2, ...: one that does not follow on (a store that numbers differently) is folded whole, uncached.
    const follows = tail.every((e, k) => e.version === (base?.version ?? -1) + 1 + k);
    if (!follows) {
      tail = await store.readStream(streamId);
      base = undefined;
    }
    let state = base ? (base.state as S) : decider.initialState();
    for (const e of tail) state = decider.evolve(state, { type: e.type, data: e.data } as E);
    const version = tail.length > 0 ? tail[tail.length - 1].version : (base?.version ?? -1);
    folds.delete(streamId);
    if (follows) {
      folds.set(streamId, { version, state });
      if (folds.size > FOLDED_STREAMS) folds.delete(folds.keys().next().value!);
    }
    out.push({ stream: { streamId, recorded: [], events: [], version }, state });
  }
  return out;
}

function loadedOf(streamId: string, recorded: RecordedEvent[]): LoadedStream {
  return {
    streamId,
    recorded,
    events: recorded.map((e) => ({ type: e.type, data: e.data })),
    version: recorded.length ? recorded[recorded.length - 1].version : -1,
  };
}

export async function load(store: EventStore, streamId: string): Promise<LoadedStream> {
  return loadedOf(streamId, (await readThrough(store, [streamId]))[0]);
}

/** `load` of many distinct streams with one read of the store. */
async function loadMany(store: EventStore, streamIds: readonly string[]): Promise<LoadedStream[]> {
  if (streamIds.length === 0) return [];
  const recorded = await readThrough(store, streamIds);
  return streamIds.map((streamId, i) => loadedOf(streamId, recorded[i]));
}

function expectedOf(stream: LoadedStream): number | 'no_stream' {
  return stream.version < 0 ? 'no_stream' : stream.version;
}

function missing(streamId: string): never {
  throw new Error(`decision writes to ${streamId}, which the command did not load`);
}

/** Version conflicts, and the deadlocks/serialization failures PostgreSQL resolves by aborting one side. */
function isRetryable(err: unknown): boolean {
  if (err instanceof WrongExpectedVersion) return true;
  const code = (err as { code?: string })?.code;
  return code === '40P01' || code === '40001';
}
