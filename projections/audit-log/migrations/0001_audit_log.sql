-- Admin write requests, logins and password changes, newest first by id.
-- `id` is the event's global position, so a rebuild reproduces it.
CREATE TABLE audit_log (
  id          bigint PRIMARY KEY,
  actor       text NOT NULL,
  method      text NOT NULL,
  path        text NOT NULL,
  status_code integer NOT NULL,
  detail      text,
  request_id  text,
  client_address text,
  created_at  timestamptz NOT NULL
);
CREATE INDEX audit_log_created ON audit_log (created_at DESC, id DESC);
