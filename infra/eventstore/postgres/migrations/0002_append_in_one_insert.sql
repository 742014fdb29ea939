-- event_store_append, same signature and result, with every event inserted by one
-- statement at the end. The first version inserted each stream's events in the
-- loop, reading p_data[k] by subscript: on an array of variable-length elements a
-- subscript walks the array from its start, so an append of n events read O(n²)
-- bytes of their data. A fleet-wide write (1,000 desired states of some 10 KB plus
-- 1,000 node events) spent 8 of its 13 seconds there. Now the loop only checks and
-- moves the stream versions (short arrays), and the events are read once, in
-- order, by unnest.
CREATE OR REPLACE FUNCTION event_store_append(
  p_streams  text[],   -- one per write, sorted
  p_expected text[],   -- 'no_stream', 'exists', 'any' or a version number
  p_counts   int[],    -- events per write
  p_ids      uuid[],   -- one per event (null: made here)
  p_types    text[],
  p_data     jsonb[],
  p_meta     jsonb
) RETURNS SETOF events LANGUAGE plpgsql AS $$
DECLARE
  v_last   int;
  n        int;
  v_firsts int[] := '{}';  -- version of each write's first new event
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
    v_firsts := v_firsts || (v_last - n + 1);
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
    RETURNING *;
END $$;
