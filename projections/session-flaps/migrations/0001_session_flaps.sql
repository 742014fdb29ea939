-- Session-level flap detection (document 3, "Flap scores", "Other flap records"):
-- the fold of the BGP session events of every `node-status-<node_id>` stream.
CREATE TABLE session_flaps (
  node_id            text NOT NULL,
  session            text NOT NULL,
  transitions_total  integer NOT NULL DEFAULT 0,
  flaps_total        integer NOT NULL DEFAULT 0,
  last_transition_at timestamptz,
  -- Score as of score_at (the last flap); readers decay it to the time of their answer.
  score              double precision NOT NULL DEFAULT 0,
  score_at           timestamptz,
  PRIMARY KEY (node_id, session)
);

-- Transitions, newest kept per node (the projection prunes beyond its retention).
CREATE TABLE session_flap_transitions (
  id          bigserial PRIMARY KEY,
  node_id     text NOT NULL,
  session     text NOT NULL,
  kind        text NOT NULL,
  from_state  text NOT NULL,
  to_state    text NOT NULL,
  captured_at timestamptz NOT NULL
);
CREATE INDEX session_flap_transitions_node ON session_flap_transitions (node_id, id DESC);
