-- event_store_append, with the events' data given as `jsonBatch` sends them (one
-- bytea of JSON texts, each one's offset and length) and parsed by the INSERT
-- itself, in the order sent; the checks and version moves are those of 0003.
--
-- The data went through a jsonb[] before: built by the calling statement (every
-- document parsed and copied into one array), handed to the function, then
-- unnested and joined to the events' slots, and the joined rows, data included,
-- sorted back into the order sent. Now each event's stream and version are laid
-- out in narrow arrays first, and one INSERT reads every array by a plain unnest
-- scan, which yields the rows in array order: no join, no sort, each document
-- parsed once. The statement appending 20,000 events of which 10,000 desired
-- states of 5.5 KB (a fleet-wide write over 10,000 nodes) took 2.9 to 3.4 s
-- before and 2.6 to 2.9 s after, a plain INSERT of the same rows 1.4 to 2.3 s
-- (alternating runs on a loaded 2-core machine); in the 10,000-node prefix block
-- of bench fleet-scale it went from 10.5 to 5.4 s.
DROP FUNCTION event_store_append(text[], text[], int[], uuid[], text[], jsonb[], jsonb);
CREATE FUNCTION event_store_append(
  p_streams  text[],   -- one per write, sorted
  p_expected text[],   -- 'no_stream', 'exists', 'any' or a version number
  p_counts   int[],    -- events per write
  p_ids      uuid[],   -- one per event (null: made here)
  p_types    text[],
  p_data     bytea,    -- the events' JSON texts back to back (UTF-8)
  p_offsets  int[],    -- each event's 1-based byte offset in p_data
  p_lengths  int[],    -- and its length in bytes
  p_meta     jsonb
) RETURNS TABLE (event_id uuid, "position" bigint, tx_id xid8, stream_id text, version int, type text, recorded_at timestamptz)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
  v_firsts   int[];  -- version of each write's first new event
  v_streams  text[]; -- each event's stream, in the order sent
  v_versions int[];  -- and its version
  v_bad      record;
  r          record;
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
  -- Event k (in the order sent: write by write) gets the k-th slot.
  SELECT array_agg(w.stream ORDER BY w.i, g), array_agg(w.first + g - 1 ORDER BY w.i, g) INTO v_streams, v_versions
    FROM unnest(p_streams, p_counts, v_firsts) WITH ORDINALITY AS w(stream, count, first, i)
    CROSS JOIN LATERAL generate_series(1, w.count) AS g;
  -- A plain unnest scan yields its rows in array order, so the events are inserted, and come back, in the order sent.
  RETURN QUERY
    INSERT INTO events (event_id, stream_id, version, type, data, metadata)
    SELECT coalesce(e.id, gen_random_uuid()), e.stream, e.version, e.type, convert_from(substring(p_data FROM e.o FOR e.l), 'UTF8')::jsonb, p_meta
    FROM unnest(p_ids, p_types, v_streams, v_versions, p_offsets, p_lengths) AS e(id, type, stream, version, o, l)
    RETURNING events.event_id, events.position, events.tx_id, events.stream_id, events.version, events.type, events.recorded_at;
END $$;
