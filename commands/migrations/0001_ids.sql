-- Integer ids of child records named in the contract. Sequences, not tables:
-- a projection rebuild must never hand out an id again.
CREATE SEQUENCE IF NOT EXISTS peering_ids;
CREATE SEQUENCE IF NOT EXISTS interface_ids;
CREATE SEQUENCE IF NOT EXISTS bgp_session_ids;
