-- A node's latest routes live in routing_routes (0010); routing_tables keeps the
-- table's identity (observation, capture time, rpki_observed). The jsonb copy is
-- no longer written: a table stored from now on has routes NULL. Tables stored
-- before 0010 keep theirs until the node's next table, because their
-- observation has no stored summary and latestRouting summarises them from it.
ALTER TABLE routing_tables ALTER COLUMN routes DROP NOT NULL;
