-- Per feed: every change the collector saw since its previous report (null for an
-- older agent) and the seconds since that report (null for the first), the rate's divisor.
ALTER TABLE prefix_flap_feeds
  ADD COLUMN total_changes integer,
  ADD COLUMN interval_s    double precision;
