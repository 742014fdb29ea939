/**
 * The SOA timers and default TTL a zone created without them gets (docs/decisions.md,
 * "Zone defaults"). Spelled out here rather than imported from `domain/dns/specs.ts`,
 * so the specs that expect them pin the decided values instead of whatever the
 * server's constant says.
 */
export const ZONE_SOA_DEFAULTS = {
  soa_refresh: 3600,
  soa_retry: 900,
  soa_expire: 604800,
  soa_minimum: 300,
  default_ttl: 3600,
} as const;
