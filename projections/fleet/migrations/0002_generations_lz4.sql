-- Desired states compressed with lz4 where the server has it: a fleet-wide write
-- stores one 9 KB state per node, and pglz took about half again as long
-- (bench `fleet-scale`). Only new rows; old ones stay as they were written.
DO $$
BEGIN
  ALTER TABLE generations ALTER COLUMN state SET COMPRESSION lz4;
EXCEPTION WHEN feature_not_supported OR invalid_parameter_value THEN
  NULL; -- a server built without lz4 keeps pglz
END $$;
