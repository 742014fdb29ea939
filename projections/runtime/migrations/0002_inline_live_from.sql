-- Where an inline projection's continuous application began: from this position
-- on, every append applies it in its own transaction (the first process that
-- attached it in this mode recorded the head then). Events of its types between
-- its checkpoint (its last rebuild) and this position were appended while nothing
-- applied it: `projections status` reports them as its lag until a rebuild.
-- Null for async projections, and for inline rows no process has attached yet.
ALTER TABLE projection_checkpoints ADD COLUMN live_tx_id bigint, ADD COLUMN live_position bigint;
