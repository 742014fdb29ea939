/**
 * What the portal knows of its user (document 3, "Session identities of the
 * portal"): read from the identity service's claims, cached in the portal
 * session. `asn` and `mntner` are null when the claims carry no verified `dn42`
 * object (the request endpoints then answer 403).
 */
export interface PortalProfile {
  /** The identity service's subject: sha256 of `<mntner>/<asn>`. */
  sub: string;
  asn: number | null;
  mntner: string | null;
  /** IPv4 prefixes the AS originates in the registry (`route` objects). */
  route: string[];
  /** IPv6 prefixes the AS originates in the registry (`route6` objects). */
  route6: string[];
}

const strings = (value: unknown): string[] => (Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : []);

/** The profile of UserInfo / ID token claims: `sub` and the `dn42` object (`asn`, `active_mnt`, `route`, `route6`). */
export function profileOfClaims(claims: Record<string, unknown>): PortalProfile {
  const dn42 = typeof claims.dn42 === 'object' && claims.dn42 !== null ? (claims.dn42 as Record<string, unknown>) : {};
  const asn = typeof dn42.asn === 'number' && Number.isSafeInteger(dn42.asn) && dn42.asn > 0 ? dn42.asn : null;
  const mnt = typeof dn42.active_mnt === 'string' ? dn42.active_mnt : typeof dn42.mnt === 'string' ? dn42.mnt : null;
  return {
    sub: typeof claims.sub === 'string' ? claims.sub : '',
    asn: asn !== null && mnt !== null ? asn : null,
    mntner: asn !== null && mnt !== null ? mnt : null,
    route: strings(dn42.route),
    route6: strings(dn42.route6),
  };
}
