/**
 * The SOA timers and default TTL the contract gives a zone created without them.
 * Spelled out here, not imported from the server, so every spec that expects a
 * zone's defaults checks them against the contract once more.
 */
export const CONTRACT_SOA_DEFAULTS = {
  soa_refresh: 3600,
  soa_retry: 900,
  soa_expire: 604800,
  soa_minimum: 300,
  default_ttl: 3600,
} as const;
