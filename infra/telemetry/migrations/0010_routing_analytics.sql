-- Routing analytics (infra/telemetry/routing.ts).

-- The routes of each node's latest table, one row each, replaced when a table
-- arrives: the prefix search filters and pages indexed rows instead of
-- unpacking the jsonb copy in routing_tables.
CREATE TABLE routing_routes (
  node_id    text NOT NULL,
  seq        integer NOT NULL,          -- position in the report
  prefix     text NOT NULL,
  family     smallint NOT NULL,
  sort_key   text,                      -- domain/telemetry/routing.ts prefixSortKey; null sorts last
  protocol   text NOT NULL,
  origin_asn bigint,
  as_path    bigint[] NOT NULL,
  rpki       text,
  local      boolean NOT NULL,
  PRIMARY KEY (node_id, seq)
);
-- No other index: a search reads the node's rows (at most 20,000) through the
-- primary key and sorts the matches; more indexes only slow the replacement.

-- Tables stored before this migration: their routes, so that the next table's churn has something to compare with.
INSERT INTO routing_routes (node_id, seq, prefix, family, sort_key, protocol, origin_asn, as_path, rpki, local)
SELECT t.node_id, r.n::integer, r.route ->> 'prefix', CASE WHEN r.route ->> 'prefix' LIKE '%:%' THEN 6 ELSE 4 END, NULL,
       r.route ->> 'protocol', (r.route ->> 'origin_asn')::bigint,
       ARRAY(SELECT jsonb_array_elements_text(r.route -> 'as_path')::bigint), r.route ->> 'rpki', (r.route ->> 'local')::boolean
FROM routing_tables t, jsonb_array_elements(t.routes) WITH ORDINALITY AS r(route, n);

-- Per observation: the summary computed on arrival, and the churn against the
-- node's previous table (null for a node's first table: nothing to compare).
ALTER TABLE routing_observations
  ADD COLUMN summary   jsonb,
  ADD COLUMN announced integer,
  ADD COLUMN withdrawn integer;
CREATE INDEX routing_observations_node_captured ON routing_observations (node_id, captured_at);

-- The fleet's view after each table: the union of every node's latest table
-- (distinct prefixes, origins, RPKI states), computed when a table arrives, so
-- the fleet trend is a series of its own (a union cannot be rebuilt from
-- per-node sizes) and the fleet views read one row instead of every route.
-- One row per 5-minute bucket (the finest trend width), the bucket's latest
-- refresh: a 30-day trend reads 8,640 rows, not one per table of every node.
CREATE TABLE routing_fleet_observations (
  at          timestamptz PRIMARY KEY,  -- 5-minute bucket of the refresh's placed time
  seq         bigserial NOT NULL,       -- refresh order: the latest row is the current view
  placed_at   timestamptz NOT NULL,     -- captured_at of the table that caused it (the server's now when ahead)
  received_at timestamptz NOT NULL,
  size        integer NOT NULL,
  size_v4     integer NOT NULL,
  size_v6     integer NOT NULL,
  summary     jsonb NOT NULL            -- {captured_at, summary}: what the fleet views read
);
CREATE INDEX routing_fleet_observations_seq ON routing_fleet_observations (seq);
CREATE INDEX routing_fleet_observations_received ON routing_fleet_observations (received_at);

-- Every origin AS of that union, replaced with each fleet observation.
CREATE TABLE routing_fleet_origins (
  asn      bigint PRIMARY KEY,
  count    integer NOT NULL,
  count_v4 integer NOT NULL,
  count_v6 integer NOT NULL,
  nodes    integer NOT NULL
);
