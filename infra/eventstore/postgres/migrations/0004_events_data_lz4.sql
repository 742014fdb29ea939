-- Event data compressed with lz4 where the server has it: a fleet-wide write
-- appends one 9 KB desired state per node (10,000 at a time), and pglz
-- compresses about half again as slowly (the `generations` table made the same
-- change in fleet migration 0002). Only new rows; old ones stay as written.
DO $$
BEGIN
  ALTER TABLE events ALTER COLUMN data SET COMPRESSION lz4;
EXCEPTION WHEN feature_not_supported OR invalid_parameter_value THEN
  NULL; -- a server built without lz4 keeps pglz
END $$;
