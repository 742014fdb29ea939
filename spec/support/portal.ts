import { subjectOf } from '../../commands/identity/sessions.js';
import type { PortalProfile } from '../../domain/autopeering/portal-profile.js';
import { openWithToken, type UpstreamTokens } from '../../infra/portal/sessions.js';
import type { TestSystem } from './system.js';

export interface GivenPortalSession {
  /** The verified ASN; null: a session without one (request endpoints answer 403). Default 4242420010. */
  asn?: number | null;
  /** Default `GAMMA-MNT`; ignored when `asn` is null. */
  mnt?: string;
  /** Originated prefixes as the `dn42` claim lists them (default none). */
  route?: string[];
  route6?: string[];
  /** Lifetime in seconds from the system clock (default the real one, `PORTAL_SESSION_TTL_SECONDS`). */
  ttlSeconds?: number;
  upstream?: Partial<UpstreamTokens>;
}

/**
 * A portal session written straight into the store, as a completed login would
 * leave it, without the OIDC dance: returns its Bearer token (and the session id).
 */
export async function givenPortalSession(sys: TestSystem, given: GivenPortalSession = {}): Promise<string> {
  return (await givenPortalSessionWithId(sys, given)).token;
}

export async function givenPortalSessionWithId(
  sys: TestSystem,
  given: GivenPortalSession = {},
): Promise<{ token: string; id: string; profile: PortalProfile }> {
  const asn = given.asn === undefined ? 4242420010 : given.asn;
  const mnt = asn === null ? null : (given.mnt ?? 'GAMMA-MNT');
  const sub = asn === null ? 'no-asn-subject' : subjectOf(mnt!, asn);
  const profile: PortalProfile = { sub, asn, mntner: mnt, route: given.route ?? [], route6: given.route6 ?? [] };
  const claims =
    asn === null ? { sub } : { sub, preferred_username: `AS${asn}`, dn42: { asn, active_mnt: mnt, mnt, route: profile.route, route6: profile.route6 } };
  const { token, id } = await openWithToken(sys.pool, {
    profile,
    claims,
    upstream: { accessToken: null, accessExpiresAt: null, refreshToken: null, ...given.upstream },
    now: sys.clock.now(),
    ttlSeconds: given.ttlSeconds,
  });
  return { token, id, profile };
}
