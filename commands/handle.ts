import { fold, type Decider, type DomainEvent } from '../domain/decider.js';
import { Conflict } from '../domain/errors.js';
import { pendingAuditWrite, type DecisionAudit } from './audit.js';
import { WrongExpectedVersion, type AppendResult, type EventMetadata, type EventStore, type RecordedEvent } from '../infra/eventstore/types.js';

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

const DEFAULT_ATTEMPTS = 30;

/**
 * Loads the streams, lets `decide` turn them into writes, and appends every write
 * with the version it was decided on. A concurrent writer makes the append fail as
 * a whole; then everything is loaded and decided again.
 */
export async function execute<T>(
  store: EventStore,
  streamIds: readonly string[],
  decide: (streams: Record<string, LoadedStream>, more: LoadMore) => Promise<Decision & { result: T }> | (Decision & { result: T }),
  metadata: EventMetadata,
  options: RetryOptions = {},
): Promise<{ result: T; append: AppendResult }> {
  const attempts = options.attempts ?? DEFAULT_ATTEMPTS;
  for (let attempt = 1; ; attempt++) {
    const loaded: Record<string, LoadedStream> = {};
    for (const id of streamIds) loaded[id] = await load(store, id);
    const more: LoadMore = async (streamId, how = 'events') => {
      const known = loaded[streamId];
      if (known && (how === 'version' || known.events.length > 0 || known.version < 0)) return known;
      loaded[streamId] = how === 'version' ? await loadVersion(store, streamId) : await load(store, streamId);
      return loaded[streamId];
    };
    const decision = await decide(loaded, more);
    const writes = decision.writes
      .filter((w) => w.events.length > 0 || w.guard)
      .map((w) => ({
        streamId: w.streamId,
        expected: expectedOf(loaded[w.streamId] ?? missing(w.streamId)),
        events: w.events,
      }));
    if (!writes.some((w) => w.events.length > 0)) return { result: decision.result, append: { versions: {}, events: [] } };
    try {
      // An audited request's entry commits with its write (commands/audit.ts).
      const audit = pendingAuditWrite(decision);
      const append = await store.append(audit ? [...writes, audit.write] : writes, metadata);
      return { result: decision.result, append: audit ? audit.carried(append) : append };
    } catch (err) {
      if (!isRetryable(err) || attempt >= attempts) {
        if (err instanceof WrongExpectedVersion) throw new Conflict(`${err.streamId} was modified concurrently; retry`);
        throw err;
      }
      await new Promise((res) => setTimeout(res, Math.random() * Math.min(50, 2 * attempt)));
    }
  }
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
export type LoadMore = (streamId: string, how?: 'events' | 'version') => Promise<LoadedStream>;

async function loadVersion(store: EventStore, streamId: string): Promise<LoadedStream> {
  return { streamId, recorded: [], events: [], version: await store.streamVersion(streamId) };
}

/**
 * Events already read, per store and stream. A stream's events never change once
 * written, so a cached prefix stays true; each load reads only what came after
 * it. Bounded: the least recently loaded streams are forgotten first.
 */
const readCache = new WeakMap<EventStore, Map<string, RecordedEvent[]>>();
const CACHED_STREAMS = 2000;

async function readThrough(store: EventStore, streamId: string): Promise<RecordedEvent[]> {
  let streams = readCache.get(store);
  if (!streams) readCache.set(store, (streams = new Map()));
  const known = streams.get(streamId) ?? [];
  const fresh = await store.readStream(streamId, { fromVersion: known.length });
  // A stream's versions are 0, 1, 2, ...; anything else (a store that numbers differently) is not cached.
  const all = fresh.length === 0 ? known : known.concat(fresh);
  streams.delete(streamId);
  if (all.every((e, i) => e.version === i)) {
    streams.set(streamId, all);
    if (streams.size > CACHED_STREAMS) streams.delete(streams.keys().next().value!);
  }
  return all;
}

export async function load(store: EventStore, streamId: string): Promise<LoadedStream> {
  const recorded = await readThrough(store, streamId);
  return {
    streamId,
    recorded,
    events: recorded.map((e) => ({ type: e.type, data: e.data })),
    version: recorded.length ? recorded[recorded.length - 1].version : -1,
  };
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
