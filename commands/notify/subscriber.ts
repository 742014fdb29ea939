import type pg from 'pg';
import { fromEvent, NOT_LOCALIZED, SIGNAL_SOURCE_EVENT_TYPES, type Localized, type SourceEvent } from '../../domain/notify/from-events.js';
import { withTransaction, type Queryable } from '../../infra/db/pool.js';
import { START, type EventStore, type GlobalPosition, type RecordedEvent } from '../../infra/eventstore/types.js';
import { cancelPending } from '../../infra/notify/outbox.js';
import { eventTime } from '../../projections/runtime/projection.js';
import { fanOut, type FanoutOptions } from './fanout.js';

const CURSOR = 'signals';
const BATCH = 500;

/** A flapping prefix's localisation (the flap page's), supplied by the composition root; none without it. */
export type Localize = (prefix: string, at: Date) => Promise<Localized>;

export interface SubscriberDeps {
  pool: pg.Pool;
  store: EventStore;
  localize?: Localize;
  fanout: FanoutOptions;
}

/**
 * Puts the cursor at the settled head when it has none (the migration that
 * makes the table puts it at the head of that moment; this covers a row
 * removed by hand): notifications are about what happens from now on.
 */
export async function initCursor(deps: Pick<SubscriberDeps, 'pool' | 'store'>): Promise<void> {
  const { rows } = await deps.pool.query(`SELECT 1 FROM notify_cursor WHERE name = $1`, [CURSOR]);
  if (rows.length > 0) return;
  const head = await deps.store.settledHead();
  await deps.pool.query(`INSERT INTO notify_cursor (name, tx, pos) VALUES ($1, $2, $3) ON CONFLICT (name) DO NOTHING`, [
    CURSOR,
    head.tx.toString(),
    head.pos.toString(),
  ]);
}

/**
 * One batch of the signal subscriber: the cursor row is locked `FOR UPDATE
 * SKIP LOCKED` (another instance holding it means it is doing this batch), the
 * events after it are turned into outbox rows and the cursor moves, all in one
 * transaction. A crash rolls both back, so no event is fanned out twice, and
 * the rows' ids (the idempotency keys) make even that harmless. Returns how
 * many events it read, or null when another instance holds the cursor.
 */
export async function subscriberBatch(deps: SubscriberDeps): Promise<number | null> {
  return withTransaction(deps.pool, async (tx) => {
    const { rows } = await tx.query(`SELECT tx::text AS tx, pos::text AS pos FROM notify_cursor WHERE name = $1 FOR UPDATE SKIP LOCKED`, [CURSOR]);
    if (rows.length === 0) return null;
    const from: GlobalPosition = { tx: BigInt(rows[0].tx), pos: BigInt(rows[0].pos) };
    const events = await deps.store.readAll(from.tx === 0n && from.pos === 0n ? START : from, BATCH);
    for (const event of events) if (SIGNAL_SOURCE_EVENT_TYPES.includes(event.type as SourceEvent['type'])) await signalOf(tx, deps, event);
    if (events.length > 0) {
      const last = events[events.length - 1].position;
      await tx.query(`UPDATE notify_cursor SET tx = $2, pos = $3, updated_at = now() WHERE name = $1`, [CURSOR, last.tx.toString(), last.pos.toString()]);
    }
    return events.length;
  });
}

async function signalOf(tx: Queryable, deps: SubscriberDeps, event: RecordedEvent): Promise<void> {
  const source = { type: event.type, data: event.data } as SourceEvent;
  const at = eventTime(event);
  const made = fromEvent(source, event.id, at.toISOString(), {
    sessionPeerAsn: await sessionPeerAsn(tx, source),
    localization: await localization(deps, source, at),
  });
  if (!made) return;
  if ('recovered' in made) await cancelPending(tx, made.recovered, at);
  else if ('pending' in made) await fanOut(tx, made.pending, deps.fanout, { cancelKey: made.cancelKey });
  else await fanOut(tx, made.signal, deps.fanout);
}

/** The remote AS of the session an event is about, from the node's latest snapshot. */
async function sessionPeerAsn(db: Queryable, source: SourceEvent): Promise<number | null> {
  const where =
    source.type === 'BgpSessionStateChanged'
      ? { node: source.data.node_id, session: source.data.session }
      : (source.type === 'FlapAlertOpened' || source.type === 'FlapAlertResolved') && source.data.key.kind === 'session'
        ? { node: source.data.key.node_id, session: source.data.key.session }
        : null;
  if (!where) return null;
  const { rows } = await db.query(
    `SELECT (p ->> 'remote_asn')::bigint AS asn FROM node_status, jsonb_array_elements(snapshot -> 'bgp_protocols') p
      WHERE node_id = $1 AND p ->> 'name' = $2 LIMIT 1`,
    [where.node, where.session],
  );
  return rows[0]?.asn != null ? Number(rows[0].asn) : null;
}

async function localization(deps: SubscriberDeps, source: SourceEvent, at: Date): Promise<Localized> {
  if (source.type !== 'FlapAlertOpened' && source.type !== 'FlapAlertResolved') return NOT_LOCALIZED;
  const key = source.data.key;
  if (key.kind === 'session') return { lines: [`localised: session ${key.session} on ${key.node_id}`], culprit_asn: null };
  return deps.localize ? deps.localize(key.prefix, at) : NOT_LOCALIZED;
}
