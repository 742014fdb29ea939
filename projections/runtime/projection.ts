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
}

export function handles(projection: Projection, event: RecordedEvent): boolean {
  return projection.handles.includes(event.type);
}
