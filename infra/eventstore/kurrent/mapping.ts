/**
 * Pure translations between the event store port (../types.ts) and the
 * `@kurrent/kurrentdb-client` model. No I/O here, so every rule is unit-tested
 * without a server (spec/infra/eventstore/kurrent-mapping.spec.ts).
 */
import { ANY, NO_STREAM, START as CLIENT_START, STREAM_EXISTS, type AppendStreamState, type Position, type ReadPosition } from '@kurrent/kurrentdb-client';
import {
  WrongExpectedVersion,
  comparePositions,
  type EventMetadata,
  type ExpectedVersion,
  type GlobalPosition,
  type RecordedEvent,
  type StreamWrite,
} from '../types.js';

/** Our expected version as the client's append state (`expectedRevision` / `expectedState`). */
export function toAppendState(expected: ExpectedVersion): AppendStreamState {
  switch (expected) {
    case 'no_stream':
      return NO_STREAM;
    case 'exists':
      return STREAM_EXISTS;
    case 'any':
      return ANY;
    default:
      if (!Number.isSafeInteger(expected) || expected < 0) throw new Error(`invalid expected version ${expected}`);
      return BigInt(expected);
  }
}

/**
 * A stream's state as the server reports it in a conflict: a revision, or
 * `no_stream`. KurrentDB reports a missing stream as `no_stream` (or -1); a deleted
 * (-5) or tombstoned (-6) stream, too, holds no events a writer could expect.
 */
export function fromCurrentState(actual: bigint | string | number | undefined | null): number | 'no_stream' {
  if (actual === undefined || actual === null || actual === 'no_stream') return 'no_stream';
  const n = typeof actual === 'bigint' ? actual : BigInt(actual);
  return n < 0n ? 'no_stream' : Number(n);
}

/** The $all position of a client event as our global position: {tx: commit, pos: prepare}. */
export function toGlobalPosition(position: Position): GlobalPosition {
  return { tx: BigInt(position.commit), pos: BigInt(position.prepare) };
}

/** Our global position as a client read position; {0,0} is the start of $all. */
export function toReadPosition(position: GlobalPosition): ReadPosition {
  if (position.tx === 0n && position.pos === 0n) return CLIENT_START;
  return { commit: position.tx, prepare: position.pos };
}

/** True when `position` lies strictly after `from` (readAll returns only those). */
export function isAfter(position: GlobalPosition, from: GlobalPosition): boolean {
  return comparePositions(position, from) > 0;
}

/**
 * Events the port delivers from $all: no system events, i.e. neither a
 * `$`-prefixed type ($metadata, $>, $streamDeleted, $statsCollected...) nor a
 * `$`-prefixed stream ($projections-..., $$meta streams, $scavenges...).
 */
export function isDeliverable(event: { streamId: string; type: string }): boolean {
  return !event.streamId.startsWith('$') && !event.type.startsWith('$');
}

/**
 * The metadata stored with every event of an append. Only string values: the
 * multi-stream append (v2 protocol) accepts nothing else, and one shape for both
 * append paths keeps reads uniform. `recordedAt` defaults to now, as on PostgreSQL.
 */
export function toStoredMetadata(metadata: EventMetadata, now: () => Date = () => new Date()): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(metadata)) {
    if (value === undefined || value === null) continue;
    out[key] = typeof value === 'string' ? value : String(value);
  }
  if (out.recordedAt === undefined) out.recordedAt = now().toISOString();
  return out;
}

/**
 * Stored metadata back to ours. Events written by a multi-stream append carry the
 * server's own `$schema.*` properties next to ours; `$`-prefixed keys are dropped.
 */
export function fromStoredMetadata(raw: unknown): EventMetadata {
  let value = raw;
  if (value instanceof Uint8Array) {
    try {
      value = JSON.parse(Buffer.from(value).toString('utf8'));
    } catch {
      value = undefined;
    }
  }
  const out: Record<string, unknown> = {};
  if (value && typeof value === 'object' && !Array.isArray(value)) {
    for (const [key, v] of Object.entries(value as Record<string, unknown>)) {
      if (!key.startsWith('$')) out[key] = v;
    }
  }
  if (typeof out.actor !== 'string') out.actor = '';
  return out as unknown as EventMetadata;
}

/** The part of a client `RecordedEvent` the adapter reads (structural, so tests need no server). */
export interface ClientRecordedEvent {
  id: string;
  streamId: string;
  revision: bigint;
  type: string;
  data: unknown;
  metadata?: unknown;
  created: Date;
  position?: Position;
}

export function toRecordedEvent(event: ClientRecordedEvent): RecordedEvent {
  if (!event.position) {
    // Positions on stream reads come with servers 22.6+; the adapter needs 25.1 anyway.
    throw new Error(`KurrentDB returned event ${event.streamId}@${event.revision} without a $all position (server too old?)`);
  }
  return {
    id: event.id,
    streamId: event.streamId,
    version: Number(event.revision),
    type: event.type,
    data: event.data,
    metadata: fromStoredMetadata(event.metadata),
    position: toGlobalPosition(event.position),
    recordedAt: event.created instanceof Date ? event.created : new Date(event.created),
  };
}

/** The client's error kinds the adapter tells apart (its `ErrorType` values). */
const WRONG_EXPECTED_VERSION = 'wrong-expected-version';
const CONSISTENCY_VIOLATION = 'append-consistency-violation';
const STREAM_NOT_FOUND = 'stream-not-found';

interface ClientWrongExpectedVersion {
  type: typeof WRONG_EXPECTED_VERSION;
  streamName?: string;
  actualState?: bigint | string;
}

interface ClientConsistencyViolation {
  type: typeof CONSISTENCY_VIOLATION;
  violations?: { streamName: string; actualState: bigint | string }[];
}

function errorType(err: unknown): string | undefined {
  const type = (err as { type?: unknown } | null)?.type;
  return typeof type === 'string' ? type : undefined;
}

export function isStreamNotFound(err: unknown): boolean {
  return errorType(err) === STREAM_NOT_FOUND;
}

/**
 * An append failure as the port's error: the client's WrongExpectedVersionError
 * (single-stream append, or a revision conflict of a multi-stream append) and the
 * consistency violation of `appendRecords` become WrongExpectedVersion with the
 * writer's own expected version; anything else is returned unchanged.
 */
export function mapAppendError(err: unknown, writes: readonly StreamWrite[]): unknown {
  const type = errorType(err);
  if (type === WRONG_EXPECTED_VERSION) {
    const e = err as ClientWrongExpectedVersion;
    const write = writes.find((w) => w.streamId === e.streamName) ?? (writes.length === 1 ? writes[0] : undefined);
    if (!write) return err;
    return withCause(new WrongExpectedVersion(write.streamId, write.expected, fromCurrentState(e.actualState)), err);
  }
  if (type === CONSISTENCY_VIOLATION) {
    const first = (err as ClientConsistencyViolation).violations?.[0];
    const write = first && writes.find((w) => w.streamId === first.streamName);
    if (!first || !write) return err;
    return withCause(new WrongExpectedVersion(write.streamId, write.expected, fromCurrentState(first.actualState)), err);
  }
  return err;
}

function withCause<E extends Error>(error: E, cause: unknown): E {
  Object.defineProperty(error, 'cause', { value: cause, enumerable: false, configurable: true, writable: true });
  return error;
}

/** Whether a stream at `actual` satisfies `expected` (for appends that write nothing). */
export function satisfies(expected: ExpectedVersion, actual: number | 'no_stream'): boolean {
  if (expected === 'any') return true;
  if (expected === 'no_stream') return actual === 'no_stream';
  if (expected === 'exists') return actual !== 'no_stream';
  return expected === actual;
}

/** A connection string without its password, for messages and logs. */
export function redactConnectionString(url: string): string {
  return url.replace(/^([a-z+]+:\/\/[^:/@]+):[^@/]*@/i, '$1:***@');
}
