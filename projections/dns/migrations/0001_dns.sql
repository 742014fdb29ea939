-- Read models of the DNS group streams. Every value comes from an event, so a
-- rebuild reproduces the rows exactly. Members are counted from `nodes.dns_group_id`
-- (fleet projection), which the node's own `NodeDnsGroupAssigned` sets.
CREATE TABLE dns_groups (
  id                integer PRIMARY KEY,
  name              text NOT NULL,
  bind_addresses    jsonb NOT NULL,
  cache_ttl_seconds integer NOT NULL,
  forwards          jsonb NOT NULL,
  enabled           boolean NOT NULL,
  created_at        timestamptz NOT NULL,
  updated_at        timestamptz NOT NULL
);

CREATE TABLE dns_zones (
  id           integer PRIMARY KEY,
  group_id     integer NOT NULL,
  zone         text NOT NULL,
  primary_ns   text,
  admin_email  text,
  soa_serial   bigint NOT NULL,
  soa_refresh  integer NOT NULL,
  soa_retry    integer NOT NULL,
  soa_expire   integer NOT NULL,
  soa_minimum  integer NOT NULL,
  default_ttl  integer NOT NULL,
  enabled      boolean NOT NULL,
  created_at   timestamptz NOT NULL,
  updated_at   timestamptz NOT NULL
);
CREATE INDEX dns_zones_group ON dns_zones (group_id, zone);

CREATE TABLE dns_records (
  id          integer PRIMARY KEY,
  zone_id     integer NOT NULL,
  group_id    integer NOT NULL,
  name        text NOT NULL,
  type        text NOT NULL,
  content     text NOT NULL,
  ttl         integer,
  comment     text,
  enabled     boolean NOT NULL,
  sort_order  integer NOT NULL,
  created_at  timestamptz NOT NULL,
  updated_at  timestamptz NOT NULL
);
CREATE INDEX dns_records_zone ON dns_records (zone_id, sort_order, id);
