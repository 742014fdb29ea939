-- The health last recorded as a NodeHealthChanged event lives in one place: the
-- inline read model `node_status_current` (projections/node-status), written in
-- the append's own transaction. This copy was written after the append and could
-- land out of order between two reports of one node.
ALTER TABLE node_status DROP COLUMN health;
