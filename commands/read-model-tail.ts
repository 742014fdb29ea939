import type { EventStore, RecordedEvent } from '../infra/eventstore/types.js';
import type { Logger } from '../infra/logger.js';

/** A read model's state of one stream and the stream version it was folded up to (-1: no event). */
export interface ModelAt<S> {
  state: S;
  version: number;
}

/** Past this many events read behind the read model, the loader logs that the model wants a rebuild. */
export const LONG_TAIL = 100;

/**
 * The state of stream `streamId` as of `version` (read before this, for the
 * append that expects it): the read model's row, and only when that row is
 * behind `version` (the projection runs behind on KurrentDB, or has no row yet:
 * added to a running system, before its rebuild) the events of the stream after
 * it, folded on with `fold`. With an inline projection the row is at `version`,
 * so a decision costs the same however long the stream has grown.
 *
 * A row ahead of `version` means the stream moved since: the append expecting
 * `version` fails and is decided again, so the row is answered as it is.
 * `rebuild`: the projection to name in the log when the tail is long.
 */
export async function readModelAndTail<S>(
  deps: { store: EventStore; log: Logger },
  streamId: string,
  version: number,
  model: ModelAt<S> | undefined,
  fold: (events: readonly RecordedEvent[], from: ModelAt<S> | undefined) => S,
  rebuild: string,
): Promise<S> {
  if (model && model.version >= version) return model.state;
  const tail = await deps.store.readStream(streamId, { fromVersion: model ? model.version + 1 : 0 });
  if (tail.length > LONG_TAIL)
    deps.log.warn({ stream: streamId, events: tail.length }, `read model ${rebuild} is behind its stream; run \`projections rebuild ${rebuild}\``);
  return fold(tail, model);
}
