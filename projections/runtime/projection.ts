import type { MigrationSet } from '../../infra/db/migrate.js';
import type { RecordedEvent, TransactionContext } from '../../infra/eventstore/types.js';

/**
 * A read model: event handlers that write PostgreSQL tables it owns.
 *
 * - `inline` projections run inside the append's transaction (PostgreSQL event
 *   store), so a response reads its own write. On a non-transactional store they
 *   run in the runner like async ones.
 * - `async` projections run in the projection runner with their own checkpoint,
 *   advanced in the same transaction as their writes.
 *
 * `apply` must be deterministic in the event alone (ids, times and names come from
 * the event), so a rebuild from position 0 reproduces the live tables exactly.
 */
export interface Projection {
  readonly name: string;
  readonly mode: 'inline' | 'async';
  /** Event types it reads; others never reach `apply`. */
  readonly handles: readonly string[];
  /** Tables it owns, emptied before a rebuild (in this order: children first). */
  readonly tables: readonly string[];
  /** Where its tables are created; applied by `migrate`. */
  readonly migrations?: MigrationSet;
  apply(tx: TransactionContext, event: RecordedEvent): Promise<void>;
  /**
   * Optional: applies several events (in order, all of handled types) at once,
   * e.g. as one multi-row statement. Must leave the tables as `apply` one by one
   * would. Used for runner batches, rebuilds and multi-event appends.
   */
  applyBatch?(tx: TransactionContext, events: readonly RecordedEvent[]): Promise<void>;
}

export function handles(projection: Projection, event: RecordedEvent): boolean {
  return projection.handles.includes(event.type);
}

/** Applies the events the projection handles, in order: in one call when it can batch. */
export async function applyEvents(projection: Projection, tx: TransactionContext, events: readonly RecordedEvent[]): Promise<void> {
  const mine = events.filter((e) => handles(projection, e));
  if (mine.length === 0) return;
  if (projection.applyBatch) {
    await projection.applyBatch(tx, mine);
    return;
  }
  for (const event of mine) await projection.apply(tx, event);
}

/**
 * When an event happened for a read model: the time its command was decided
 * (`metadata.recordedAt`, the request clock), else when the store recorded it.
 * Both come from the event, so a rebuild reproduces them.
 */
export function eventTime(event: RecordedEvent): Date {
  return event.metadata.recordedAt ? new Date(event.metadata.recordedAt) : event.recordedAt;
}
