// SQL of the PostgreSQL event store, next to the adapter that owns the tables.

export const insertEvents = `
  INSERT INTO events (event_id, stream_id, version, type, data, metadata)
  SELECT coalesce(id, gen_random_uuid()), stream_id, version, type, data, metadata
  FROM unnest($6::uuid[], $1::text[], $2::int[], $3::text[], $4::jsonb[], $5::jsonb[]) AS t(id, stream_id, version, type, data, metadata)
  RETURNING event_id, position, tx_id::text AS tx_text, stream_id, version, type, data, metadata, recorded_at`;

export const createStream = `
  INSERT INTO streams (stream_id, version) VALUES ($1, $2)
  ON CONFLICT (stream_id) DO NOTHING
  RETURNING version`;

export const upsertStream = `
  INSERT INTO streams (stream_id, version) VALUES ($1, $2 - 1)
  ON CONFLICT (stream_id) DO UPDATE SET version = streams.version + $2
  RETURNING version`;

export const advanceExisting = `
  UPDATE streams SET version = version + $2 WHERE stream_id = $1 RETURNING version`;

// Under READ COMMITTED a concurrent writer's committed update makes PostgreSQL
// re-check the WHERE clause on the new row, so a stale expected version matches nothing.
export const advanceExact = `
  UPDATE streams SET version = version + $3 WHERE stream_id = $1 AND version = $2 RETURNING version`;

export const streamVersion = `SELECT version FROM streams WHERE stream_id = $1 FOR SHARE`;

export const notify = `SELECT pg_notify($1, '')`;

export const readStream = `
  SELECT event_id, position, tx_id::text AS tx_text, stream_id, version, type, data, metadata, recorded_at
  FROM events WHERE stream_id = $1 AND version >= $2 ORDER BY version`;

// Only rows of transactions older than every running one: those are finished, and
// no transaction still running or yet to start can insert a row that sorts before them.
export const readAll = `
  SELECT event_id, position, tx_id::text AS tx_text, stream_id, version, type, data, metadata, recorded_at
  FROM events
  WHERE (tx_id, position) > ($1::text::xid8, $2::bigint)
    AND tx_id < pg_snapshot_xmin(pg_current_snapshot())
  ORDER BY events.tx_id, events.position
  LIMIT $3`;

export const head = `
  SELECT tx_id::text AS tx_text, position FROM events
  WHERE tx_id < pg_snapshot_xmin(pg_current_snapshot())
  ORDER BY events.tx_id DESC, events.position DESC LIMIT 1`;

export const countAfter = `
  SELECT count(*) AS count FROM events
  WHERE (tx_id, position) > ($1::text::xid8, $2::bigint)
    AND tx_id < pg_snapshot_xmin(pg_current_snapshot())`;

/**
 * Every committed event in global order, no xmin filter: used only by an inline
 * projection's rebuild, inside one REPEATABLE READ snapshot taken after it has
 * locked the projection's tables.
 */
export const readAllInSnapshot = `
  SELECT event_id, position, tx_id::text AS tx_text, stream_id, version, type, data, metadata, recorded_at
  FROM events
  WHERE (tx_id, position) > ($1::text::xid8, $2::bigint)
  ORDER BY events.tx_id, events.position
  LIMIT $3`;

export const readLast = `
  SELECT event_id, position, tx_id::text AS tx_text, stream_id, version, type, data, metadata, recorded_at
  FROM events
  WHERE tx_id < pg_snapshot_xmin(pg_current_snapshot())
  ORDER BY events.tx_id DESC, events.position DESC
  LIMIT $1`;
