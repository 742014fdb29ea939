-- The event store.
--
-- `position` orders rows as they were inserted; `tx_id` is the inserting
-- transaction. The global order is (tx_id, position), and readers only read below
-- the "horizon": the oldest transaction that is still writing events in this
-- database. A transaction that commits late therefore never lands behind a
-- reader's checkpoint, and transactions that write no events (a long rebuild,
-- another database on the same server) never hold readers back.
CREATE TABLE events (
  position    bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  event_id    uuid NOT NULL DEFAULT gen_random_uuid() UNIQUE,
  tx_id       xid8 NOT NULL DEFAULT pg_current_xact_id(),
  stream_id   text NOT NULL,
  version     integer NOT NULL,
  type        text NOT NULL,
  data        jsonb NOT NULL,
  metadata    jsonb NOT NULL,
  recorded_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (stream_id, version)
);

CREATE INDEX events_global_order ON events (tx_id, position);
CREATE INDEX events_type ON events (type);

-- One row per stream holding its current version: the row lock is what makes
-- expected-version checks of concurrent writers exact.
CREATE TABLE streams (
  stream_id text PRIMARY KEY,
  version   integer NOT NULL
);

-- The writer protocol. A transaction that writes events holds this advisory lock
-- (shared: writers never wait for each other) from before it has a transaction
-- id until it ends, so readers can see, in pg_locks, every event writer still
-- running and its id.
CREATE FUNCTION event_store_enter_writer() RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  IF current_setting('event_store.writer', true) IS DISTINCT FROM 'on' THEN
    -- Race guard: a transaction that already has an id could have taken it
    -- before a reader looked, then slip events in under that reader's horizon.
    IF pg_current_xact_id_if_assigned() IS NOT NULL THEN
      RAISE EXCEPTION 'event store writes must come first in their transaction' USING ERRCODE = 'ES001';
    END IF;
    PERFORM pg_advisory_xact_lock_shared(424242, 1);
    PERFORM set_config('event_store.writer', 'on', true);
  END IF;
END $$;

CREATE FUNCTION event_store_writer_guard() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM event_store_enter_writer();
  RETURN NULL;
END $$;

-- Statement triggers fire before the first row is written, that is before the
-- transaction gets its id; every path that writes events goes through them.
CREATE TRIGGER events_writer_guard BEFORE INSERT OR UPDATE OR DELETE ON events
  FOR EACH STATEMENT EXECUTE FUNCTION event_store_writer_guard();
CREATE TRIGGER streams_writer_guard BEFORE INSERT OR UPDATE OR DELETE ON streams
  FOR EACH STATEMENT EXECUTE FUNCTION event_store_writer_guard();

-- The horizon: no event at or above it can be trusted to be final yet. It is the
-- smallest id among event writers running now, or the next id to be assigned.
-- Call it in a statement of its own and read events in a later one, so that
-- every writer below the horizon is finished in the reading statement's snapshot.
CREATE FUNCTION event_store_horizon() RETURNS xid8 LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  next_id numeric := pg_snapshot_xmax(pg_current_snapshot())::text::numeric;
  low     numeric := mod(next_id, 4294967296);
  oldest  numeric;
BEGIN
  -- pg_stat_activity shows 32-bit ids. A running writer's id lies within 2^31
  -- of the snapshot's next id: before it (assigned earlier) or after it
  -- (assigned since the snapshot was taken). Take the signed 32-bit distance to
  -- widen it to 64 bits across an epoch boundary.
  SELECT min(next_id - CASE WHEN d > 2147483648 THEN d - 4294967296 ELSE d END)
    INTO oldest
    FROM (
      SELECT mod(low - a.backend_xid::text::numeric + 4294967296, 4294967296) AS d
      FROM pg_locks l
      JOIN pg_stat_activity a ON a.pid = l.pid
      WHERE l.locktype = 'advisory'
        AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
        AND l.classid = 424242 AND l.objid = 1 AND l.objsubid = 2
        AND l.granted
        AND a.backend_xid IS NOT NULL
    ) running;
  RETURN least(next_id, coalesce(oldest, next_id))::text::xid8;
END $$;

-- Raises the conflict an append reports: the stream, what was expected, what is there.
CREATE FUNCTION event_store_conflict(p_stream text, p_expected text, p_actual int) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'wrong expected version' USING ERRCODE = 'ES409',
    DETAIL = json_build_object('stream', p_stream, 'expected', p_expected, 'actual', p_actual)::text;
END $$;

-- Checks one stream against its expected version and reserves `n` versions on
-- it; returns the version of the stream's last event afterwards (-1: none).
-- The row lock orders concurrent writers of a stream: under READ COMMITTED a
-- writer that waited sees the version its predecessor committed.
CREATE FUNCTION event_store_reserve(p_stream text, p_expected text, n int) RETURNS int LANGUAGE plpgsql AS $$
DECLARE
  v_current int := (SELECT version FROM streams WHERE stream_id = p_stream FOR UPDATE);
  v_last    int;
BEGIN
  IF (p_expected = 'no_stream' AND v_current IS NOT NULL)
     OR (p_expected = 'exists' AND v_current IS NULL)
     OR (p_expected NOT IN ('no_stream', 'exists', 'any') AND v_current IS DISTINCT FROM p_expected::int) THEN
    PERFORM event_store_conflict(p_stream, p_expected, v_current);
  END IF;
  IF v_current IS NOT NULL THEN
    IF n > 0 THEN UPDATE streams SET version = v_current + n WHERE stream_id = p_stream; END IF;
    RETURN v_current + n;
  END IF;
  IF p_expected = 'any' AND n > 0 THEN
    INSERT INTO streams AS s (stream_id, version) VALUES (p_stream, n - 1)
      ON CONFLICT (stream_id) DO UPDATE SET version = s.version + n
      RETURNING version INTO v_last;
    RETURN v_last;
  END IF;
  IF p_expected = 'any' THEN
    RETURN -1;
  END IF;
  -- No stream yet. A creator that committed after our look finds the stream
  -- taken: a conflict. Race (write skew) for a pure guard (n = 0): with no row to
  -- lock, the check passed while a creator was still uncommitted; a placeholder
  -- row, inserted and deleted at once, waits for such a creator and makes later
  -- ones wait for us.
  INSERT INTO streams (stream_id, version) VALUES (p_stream, n - 1)
    ON CONFLICT (stream_id) DO NOTHING
    RETURNING version INTO v_last;
  IF v_last IS NULL THEN
    PERFORM event_store_conflict(p_stream, p_expected, (SELECT version FROM streams WHERE stream_id = p_stream));
  END IF;
  IF n = 0 THEN
    DELETE FROM streams WHERE stream_id = p_stream;
  END IF;
  RETURN v_last;
END $$;

-- One append, checked and written in one statement: every stream's expected
-- version (in stream order, so concurrent multi-stream appends cannot deadlock),
-- then the events. A mismatch raises ES409 and nothing is written.
CREATE FUNCTION event_store_append(
  p_streams  text[],   -- one per write, sorted
  p_expected text[],   -- 'no_stream', 'exists', 'any' or a version number
  p_counts   int[],    -- events per write
  p_ids      uuid[],   -- one per event (null: made here)
  p_types    text[],
  p_data     jsonb[],
  p_meta     jsonb
) RETURNS SETOF events LANGUAGE plpgsql AS $$
DECLARE
  v_first int := 1;
  v_last  int;
  n       int;
BEGIN
  PERFORM event_store_enter_writer();
  FOR i IN 1 .. coalesce(array_length(p_streams, 1), 0) LOOP
    n := p_counts[i];
    v_last := NULL;
    IF n > 0 AND p_expected[i] NOT IN ('no_stream', 'exists', 'any') THEN
      -- The common case in one statement: move an exact version forward.
      UPDATE streams SET version = version + n
        WHERE stream_id = p_streams[i] AND version = p_expected[i]::int
        RETURNING version INTO v_last;
    END IF;
    IF v_last IS NULL THEN
      v_last := event_store_reserve(p_streams[i], p_expected[i], n);
    END IF;
    IF n > 0 THEN
      RETURN QUERY
        INSERT INTO events (event_id, stream_id, version, type, data, metadata)
        SELECT coalesce(p_ids[k], gen_random_uuid()), p_streams[i], v_last - n + 1 + (k - v_first), p_types[k], p_data[k], p_meta
        FROM generate_series(v_first, v_first + n - 1) AS k
        ORDER BY k
        RETURNING *;
    END IF;
    v_first := v_first + n;
  END LOOP;
END $$;
