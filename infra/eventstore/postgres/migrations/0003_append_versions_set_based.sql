-- event_store_append, same arguments, with the streams expected at an
-- exact version (every write of a command: appends and guards) checked and moved
-- forward by three statements in all, not two or three statements per stream. A
-- fleet-wide write over 10,000 nodes appends to or guards some 20,000 streams;
-- the loop ran an UPDATE (and its statement trigger) or a locking SELECT for each.
--
-- 1. Lock the rows of those streams in stream order (the order every append
--    locks in, so two appends over the same streams still cannot deadlock).
-- 2. Compare their versions with the expected ones; on any difference the first
--    such stream, in stream order, goes through event_store_reserve, which raises
--    the conflict with what is there exactly as before (a missing row included).
-- 3. Move the versions of the streams that get events forward in one UPDATE.
--
-- Streams expected as 'no_stream', 'exists' or 'any' (creations) still go one by
-- one through event_store_reserve, after the exact ones.
--
-- The events are inserted by one statement (0002), in the order sent, and come
-- back without their data and metadata: the caller has them (`sql.append` never
-- read them), and RETURN QUERY kept every returned row in a tuplestore, which a
-- fleet-wide write's 10 MB of desired states per 1,000 nodes spilled to a
-- temporary file. Also: events.data is compressed with lz4 where the server has
-- it (faster than pglz for the 9 KB desired states of a fleet-wide write).
DROP FUNCTION event_store_append(text[], text[], int[], uuid[], text[], jsonb[], jsonb);
CREATE FUNCTION event_store_append(
  p_streams  text[],   -- one per write, sorted
  p_expected text[],   -- 'no_stream', 'exists', 'any' or a version number
  p_counts   int[],    -- events per write
  p_ids      uuid[],   -- one per event (null: made here)
  p_types    text[],
  p_data     jsonb[],
  p_meta     jsonb
) RETURNS TABLE (event_id uuid, "position" bigint, tx_id xid8, stream_id text, version int, type text, recorded_at timestamptz)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
  v_firsts int[];  -- version of each write's first new event
  v_bad    record;
  r        record;
BEGIN
  PERFORM event_store_enter_writer();
  PERFORM 1 FROM streams
    WHERE stream_id IN (SELECT x.s FROM unnest(p_streams, p_expected) AS x(s, e) WHERE x.e NOT IN ('no_stream', 'exists', 'any'))
    ORDER BY stream_id
    FOR UPDATE;
  SELECT x.s, x.e INTO v_bad
    FROM unnest(p_streams, p_expected) AS x(s, e)
    LEFT JOIN streams ON streams.stream_id = x.s
    WHERE x.e NOT IN ('no_stream', 'exists', 'any') AND streams.version IS DISTINCT FROM x.e::int
    ORDER BY x.s
    LIMIT 1;
  IF FOUND THEN
    PERFORM event_store_reserve(v_bad.s, v_bad.e, 0);
    -- Not reached: the versions differ, so reserve raised the conflict.
    RAISE EXCEPTION 'event_store_append: % expected at %, reserve did not raise', v_bad.s, v_bad.e;
  END IF;
  UPDATE streams SET version = version + x.n
    FROM unnest(p_streams, p_expected, p_counts) AS x(s, e, n)
    WHERE streams.stream_id = x.s AND x.n > 0 AND x.e NOT IN ('no_stream', 'exists', 'any');
  SELECT array_agg(CASE WHEN x.e NOT IN ('no_stream', 'exists', 'any') THEN x.e::int + 1 END ORDER BY x.i) INTO v_firsts
    FROM unnest(p_streams, p_expected) WITH ORDINALITY AS x(s, e, i);
  FOR r IN SELECT x.s, x.e, x.n, x.i FROM unnest(p_streams, p_expected, p_counts) WITH ORDINALITY AS x(s, e, n, i)
           WHERE x.e IN ('no_stream', 'exists', 'any') ORDER BY x.i LOOP
    v_firsts[r.i] := event_store_reserve(r.s, r.e, r.n) - r.n + 1;
  END LOOP;
  -- Event k (in the order sent: write by write) gets the k-th slot; rows come back in that order.
  RETURN QUERY
    WITH slots AS (
      SELECT row_number() OVER (ORDER BY w.i, g) AS k, w.stream, w.first + g - 1 AS version
      FROM unnest(p_streams, p_counts, v_firsts) WITH ORDINALITY AS w(stream, count, first, i)
      CROSS JOIN LATERAL generate_series(1, w.count) AS g
    )
    INSERT INTO events (event_id, stream_id, version, type, data, metadata)
    SELECT coalesce(e.id, gen_random_uuid()), s.stream, s.version, e.type, e.data, p_meta
    FROM unnest(p_ids, p_types, p_data) WITH ORDINALITY AS e(id, type, data, k)
    JOIN slots s ON s.k = e.k
    ORDER BY e.k
    RETURNING events.event_id, events.position, events.tx_id, events.stream_id, events.version, events.type, events.recorded_at;
END $$;

DO $$
BEGIN
  ALTER TABLE events ALTER COLUMN data SET COMPRESSION lz4;
EXCEPTION WHEN feature_not_supported OR invalid_parameter_value THEN
  NULL; -- a server built without lz4 keeps pglz
END $$;
