-- Integer ids of DNS groups, zones and records (contract: integer ids). Sequences,
-- not tables: a projection rebuild must never hand out an id again.
CREATE SEQUENCE IF NOT EXISTS dns_group_ids;
CREATE SEQUENCE IF NOT EXISTS dns_zone_ids;
CREATE SEQUENCE IF NOT EXISTS dns_record_ids;
