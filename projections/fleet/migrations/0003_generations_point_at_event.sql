-- A generation's desired state is stored once, in its `DesiredStatePublished`
-- event: the row keeps the event's position in `events` (issue 30, bench
-- `fleet-scale`: a fleet-wide write on 10,000 nodes spent 6.5 s of its 31.7 s
-- writing the 10,000 states a second time here). Reads take the state from the
-- event (`COALESCE(state, events.data -> 'state')`). `state` is still written
-- when the event is not in this database's `events` table (a KurrentDB event
-- log), and rows written before this migration keep their copy until a rebuild.
ALTER TABLE generations ALTER COLUMN state DROP NOT NULL;
ALTER TABLE generations ADD COLUMN event_position bigint;
ALTER TABLE generations ADD CONSTRAINT generations_state_somewhere CHECK (state IS NOT NULL OR event_position IS NOT NULL);
