/** The services one `dn42-control serve` can run (kept apart from system.ts so the command line can name them without loading the services). */
export const ROLES = ['control', 'identity', 'registry', 'site', 'projections'] as const;
export type Role = (typeof ROLES)[number];
