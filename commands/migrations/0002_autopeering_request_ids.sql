-- Ids of automatic-peering requests (`autopeer-request-<id>` streams, `/requests/{id}`).
CREATE SEQUENCE IF NOT EXISTS autopeering_request_ids;
