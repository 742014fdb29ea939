import type { RequestHandler, Response } from 'express';
import type { PortalProfile } from '../../../domain/autopeering/portal-profile.js';
import { findPortalSession } from '../../../infra/portal/sessions.js';
import { bearerOf } from '../../shared/bearer.js';
import type { ServiceContext } from '../../shared/context.js';
import { HttpError } from '../../shared/errors.js';

/** Who a portal request is (`res.locals.portal`): set by `requirePortalSession`. */
export interface PortalIdentity {
  sessionId: string;
  /** The verified ASN, or null when the session's claims carry none. */
  asn: number | null;
  mnt: string | null;
  profile: PortalProfile;
  expiresAt: Date;
}

export const MISSING_PORTAL_TOKEN = 'missing bearer token';
export const INVALID_PORTAL_TOKEN = 'invalid or expired portal session';
export const NO_VERIFIED_ASN = 'this portal session has no verified ASN: log in again through the identity service with an ASN whose maintainer you are';

/** The 401 and 403 rows every portal-session route declares (spread into `responses`). */
export const PORTAL_UNAUTHORIZED = { 401: `${MISSING_PORTAL_TOKEN} / ${INVALID_PORTAL_TOKEN}` };
export const PORTAL_NO_ASN = { 403: NO_VERIFIED_ASN };

/** Routes under `/autopeering` that need no portal session (login, callback, exchange; `/session` takes an identity JWT). */
const OPEN_PATHS = new Set(['/auth/login', '/auth/login-url', '/auth/callback', '/auth/exchange', '/session']);

/**
 * Guards one route (or a router) with a portal session token: the Bearer is
 * looked up by its sha256 among live portal sessions only, so an admin token or
 * an account session token is as unknown here as a forged one (separate trust
 * domains). 401 when missing, unknown, expired or logged out.
 */
export function requirePortalSession(ctx: ServiceContext): RequestHandler {
  return async (req, res, next) => {
    const bearer = bearerOf(req.headers.authorization);
    if (bearer === undefined) return refuse(res, next, 401, MISSING_PORTAL_TOKEN);
    try {
      const session = await findPortalSession(ctx.pool, bearer, ctx.now());
      if (!session) return refuse(res, next, 401, INVALID_PORTAL_TOKEN);
      const { profile } = session;
      const portal: PortalIdentity = { sessionId: session.id, asn: profile.asn, mnt: profile.mntner, profile, expiresAt: session.expiresAt };
      res.locals.portal = portal;
      res.locals.actor = profile.asn !== null ? `portal:AS${profile.asn}/${profile.mntner}` : `portal:${profile.sub}`;
      next();
    } catch (err) {
      next(err);
    }
  };
}

/**
 * The guard mounted on the whole `/autopeering` prefix: every route there needs
 * a portal session except the login ones (`OPEN_PATHS`), so a new portal route
 * is protected without having to remember it. OPTIONS passes: it runs no
 * handler, Express answers it with the routed methods (a CORS preflight carries
 * no credentials either).
 */
export function portalGate(ctx: ServiceContext): RequestHandler {
  const guard = requirePortalSession(ctx);
  return (req, res, next) => (req.method === 'OPTIONS' || OPEN_PATHS.has(req.path.replace(/\/+$/, '')) ? next() : guard(req, res, next));
}

/** The identity of a request that passed `requirePortalSession`. */
export function portalOf(res: Response): PortalIdentity {
  const portal = res.locals.portal as PortalIdentity | undefined;
  if (!portal) throw new Error('portal route mounted without requirePortalSession');
  return portal;
}

/** The identity with its verified ASN and maintainer; 403 `NO_VERIFIED_ASN` without one. */
export function requireVerifiedAsn(res: Response): PortalIdentity & { asn: number; mnt: string } {
  const portal = portalOf(res);
  if (portal.asn === null || portal.mnt === null) {
    res.locals.auditDetail = NO_VERIFIED_ASN;
    throw new HttpError(403, NO_VERIFIED_ASN);
  }
  return portal as PortalIdentity & { asn: number; mnt: string };
}

function refuse(res: Response, next: (err: unknown) => void, status: number, detail: string): void {
  res.locals.auditDetail = detail;
  next(new HttpError(status, detail));
}
