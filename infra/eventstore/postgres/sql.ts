// SQL of the PostgreSQL event store, next to the adapter that owns the tables
// (the functions it calls are in migrations/0001_events.sql).
import { jsonbAt } from '../../db/json-batch.js';

const COLUMNS = `event_id, position, tx_id::text AS tx_text, stream_id, version, type, data, metadata, recorded_at`;

/**
 * One append in one statement: version checks and inserts (see `event_store_append`).
 * The events' data travel as one bytea of their JSON texts back to back ($6, with
 * each one's offset $8 and length $9: `jsonBatch`), each parsed once by the
 * function's INSERT (eventstore migration 0004), not as a jsonb[] literal, whose
 * every element the driver would escape character by character, nor as one JSON
 * array, which PostgreSQL would parse into one large jsonb before copying each
 * element out (a fleet-wide write sends some 10 MB of desired states per 1,000
 * nodes). Data and metadata are not sent back: the writer has them, and a large
 * desired state would cross the wire and be parsed a second time.
 */
export const append = `SELECT event_id, position, tx_id::text AS tx_text, stream_id, version, type, recorded_at
  FROM event_store_append($1::text[], $2::text[], $3::int[], $4::uuid[], $5::text[], $6::bytea, $8::int[], $9::int[], $7::jsonb)`;

/**
 * The common append in one plain statement: one stream, an exact expected
 * version, at least one event. The UPDATE takes the stream's row lock and moves
 * its version forward only when it is the one expected (a writer that waited for
 * the lock re-checks the committed row), and the events are inserted from the
 * version it returns. No row back means the version was not the expected one
 * (or the stream does not exist): the caller then runs `append`, which raises
 * the conflict with what is there. Statement triggers on both tables enter the
 * writer protocol before the transaction has an id, as for every write.
 * $1 stream, $2 expected version, $3 event count, $4 ids, $5 types, $6 data
 * (`jsonBatch`: bytes, $8 offsets, $9 lengths), $7 metadata.
 */
export const appendToVersion = `WITH moved AS (
    UPDATE streams SET version = version + $3::int
    WHERE stream_id = $1::text AND version = $2::int
    RETURNING version)
  INSERT INTO events (event_id, stream_id, version, type, data, metadata)
  SELECT coalesce(e.id, gen_random_uuid()), $1::text, moved.version - $3::int + e.k::int, e.type, d.data, $7::jsonb
  FROM moved,
    unnest($4::uuid[], $5::text[]) WITH ORDINALITY AS e(id, type, k)
    JOIN (SELECT ${jsonbAt('$6::bytea', 'o', 'l')} AS data, k FROM unnest($8::int[], $9::int[]) WITH ORDINALITY AS t(o, l, k)) AS d ON d.k = e.k
  ORDER BY e.k
  RETURNING event_id, position, tx_id::text AS tx_text, stream_id, version, type, recorded_at`;

/**
 * Names of the append statements, prepared once per connection: planning them
 * (the CTE, the function's call) cost about as much as running them (bench
 * `append`, 16 writers: 0.39x raw INSERT unnamed, 0.73x named). Each name is
 * only ever used for its one text.
 */
export const APPEND_STATEMENT = 'dn42_event_store_append';
export const APPEND_TO_VERSION_STATEMENT = 'dn42_event_store_append_to_version';

export const streamVersions = `SELECT stream_id, version FROM streams WHERE stream_id = ANY($1::text[])`;

export const notify = `SELECT pg_notify($1, '')`;

/**
 * Several streams from a version each, in one statement: one index range scan per
 * stream (the (stream_id, version) key), rows grouped by stream in version order.
 */
export const readStreams = `
  SELECT ${COLUMNS}
  FROM unnest($1::text[], $2::int[]) AS wanted(id, from_version)
  JOIN events ON events.stream_id = wanted.id AND events.version >= wanted.from_version
  ORDER BY events.stream_id, events.version`;

/** `readStreams` with only the columns a fold reads. */
export const readStreamsData = `
  SELECT events.stream_id, events.version, events.type, events.data
  FROM unnest($1::text[], $2::int[]) AS wanted(id, from_version)
  JOIN events ON events.stream_id = wanted.id AND events.version >= wanted.from_version
  ORDER BY events.stream_id, events.version`;

export const readStream = `
  SELECT ${COLUMNS}
  FROM events WHERE stream_id = $1 AND version >= $2 ORDER BY version`;

/**
 * The horizon, in a statement of its own: every reader of the global order asks
 * for it first and reads below it in a later statement (a fresh snapshot), so an
 * event writer that was still running when the horizon was taken is never passed.
 */
export const horizon = `SELECT event_store_horizon()::text AS horizon`;

/** The id the next transaction will get: a writer running now has a smaller one. */
export const nextTransactionId = `SELECT pg_snapshot_xmax(pg_current_snapshot())::text AS next`;

// Sort by the xid8 column itself (qualified): the select list has its text, and an
// unqualified ORDER BY would sort by that text (no index, wrong order past 10^n).
export const readAll = `
  SELECT ${COLUMNS}
  FROM events
  WHERE (tx_id, position) > ($1::text::xid8, $2::bigint)
    AND tx_id < $4::text::xid8
  ORDER BY events.tx_id, events.position
  LIMIT $3`;

export const head = `
  SELECT tx_id::text AS tx_text, position FROM events
  WHERE tx_id < $1::text::xid8
  ORDER BY events.tx_id DESC, events.position DESC LIMIT 1`;

export const countAfter = `
  SELECT count(*) AS count FROM events
  WHERE (tx_id, position) > ($1::text::xid8, $2::bigint)
    AND tx_id < $3::text::xid8
    AND ($4::text[] IS NULL OR type = ANY($4::text[]))
    AND ($5::text IS NULL OR (tx_id, position) <= ($5::text::xid8, $6::bigint))`;

export const readLast = `
  SELECT ${COLUMNS}
  FROM events
  WHERE tx_id < $2::text::xid8
  ORDER BY events.tx_id DESC, events.position DESC
  LIMIT $1`;

/**
 * Every committed event in global order, no horizon: used only by an inline
 * projection's rebuild, inside one REPEATABLE READ snapshot taken after it has
 * locked the projection's tables.
 */
export const readAllInSnapshot = `
  SELECT ${COLUMNS}
  FROM events
  WHERE (tx_id, position) > ($1::text::xid8, $2::bigint)
  ORDER BY events.tx_id, events.position
  LIMIT $3`;

/**
 * Writer locks, taken in the order given (callers sort them), each waiting for
 * its holders; transaction-scoped, so a commit or rollback releases them. A
 * plain scan of unnest evaluates the rows in array order.
 */
export const lock = `SELECT CASE WHEN s THEN pg_advisory_xact_lock_shared(k) ELSE pg_advisory_xact_lock(k) END
  FROM unnest($1::bigint[], $2::bool[]) AS t(k, s)`;

/** More exclusive writer locks, none waited for: false when one is held elsewhere. */
export const tryLock = `SELECT coalesce(bool_and(pg_try_advisory_xact_lock(k)), true) AS ok FROM unnest($1::bigint[]) AS k`;
