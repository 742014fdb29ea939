import { randomUUID } from 'node:crypto';
import { SignJWT, errors as joseErrors, jwtVerify, type JWTPayload, type JWTHeaderParameters } from 'jose';
import type { DomainEvent } from '../../domain/decider.js';
import { sha256Hex } from '../../domain/sha256.js';
import type { AuthMethod, SessionGrant } from '../../domain/identity/views.js';
import type pg from 'pg';
import type { Config } from '../../infra/config.js';
import type { EventStore } from '../../infra/eventstore/types.js';
import { currentSigningKey, publishedKey } from '../../infra/identity/keys.js';
import { execute } from '../handle.js';

export type { AuthMethod, SessionGrant };
export const AUTH_METHODS: readonly AuthMethod[] = ['email', 'pgp', 'ssh', 'passkey'];

/** What signing and verifying sessions needs: the signing-key table, the issuer (and key secret), the service clock. */
export interface SessionDeps {
  pool: pg.Pool;
  config: Config;
  now: () => Date;
}

/** Session JWT lifetime (contract: 2 hours). */
export const SESSION_TTL_SECONDS = 2 * 60 * 60;

/**
 * The `aud` of session tokens. Deliberately not the issuer: access tokens for
 * `/userinfo` carry the issuer as audience, so a session token is refused there
 * (audience separation) and an access token is refused where a session is needed.
 */
export const SESSION_AUDIENCE = 'urn:dn42:identity:session';

/** The only algorithm a session token may use; the header's `alg` is never trusted. */
const ALGORITHMS = ['EdDSA'];

/** Verified claims of a session token. `mnt` may be absent (a token without a maintainer). */
export interface SessionClaims {
  sub: string;
  asn: number;
  mnt?: string;
  method: AuthMethod;
  jti: string;
  iat: number;
  exp: number;
}

/** Issuance record: the jti and the token's sha256, never the token itself. */
export type SessionIssued = DomainEvent<
  'SessionIssued',
  { jti: string; token_sha256: string; sub: string; asn: number; mntner: string; method: AuthMethod; issued_at: string; expires_at: string }
>;

/** `sub`: lowercase hex sha256 of `<mntner>/<asn>`; the OIDC UserInfo `sub` uses the same derivation. */
export function subjectOf(mntner: string, asn: number): string {
  return sha256Hex(`${mntner}/${asn}`);
}

/** A signed session and the event that records it, not yet appended. */
export interface PreparedSession {
  grant: SessionGrant;
  /** `SessionIssued` on `session-<jti>`: append it (`no_stream`) in the same append as whatever the session depends on. */
  write: { streamId: string; events: [SessionIssued] };
  /** The actor of the append: the verified maintainer. */
  actor: string;
}

/**
 * Signs a 2-hour EdDSA session JWT for the verified (mntner, asn) pair and makes
 * the event that records only its jti and sha256. Nothing is written, so a
 * caller can append the record together with the step that earned the session
 * (a challenge's success), and a signing failure leaves no trace.
 * `passkey_enrollment_available` is not set here.
 */
export async function prepareSession(deps: SessionDeps, identity: { asn: number; mntner: string; method: AuthMethod }): Promise<PreparedSession> {
  const now = deps.now();
  const iat = Math.floor(now.getTime() / 1000);
  const exp = iat + SESSION_TTL_SECONDS;
  const jti = randomUUID();
  const sub = subjectOf(identity.mntner, identity.asn);
  const key = await currentSigningKey(deps.pool, deps.config, now);
  const token = await new SignJWT({ asn: identity.asn, mnt: identity.mntner, method: identity.method })
    .setProtectedHeader({ alg: 'EdDSA', typ: 'JWT', kid: key.kid })
    .setSubject(sub)
    .setJti(jti)
    .setIssuer(deps.config.identityIssuer)
    .setAudience(SESSION_AUDIENCE)
    .setIssuedAt(iat)
    .setExpirationTime(exp)
    .sign(key.privateKey);
  const expiresAt = new Date(exp * 1000).toISOString();
  const issued: SessionIssued = {
    type: 'SessionIssued',
    data: {
      jti,
      token_sha256: sha256Hex(token),
      sub,
      asn: identity.asn,
      mntner: identity.mntner,
      method: identity.method,
      issued_at: now.toISOString(),
      expires_at: expiresAt,
    },
  };
  return {
    grant: { token, asn: identity.asn, mntner: identity.mntner, method: identity.method, expires_at: expiresAt },
    write: { streamId: `session-${jti}`, events: [issued] },
    actor: `mntner:${identity.mntner}`,
  };
}

/** Signs a session and records it on its own (passkey login, whose success leaves nothing else to write). */
export async function issueSession(
  deps: SessionDeps & { store: EventStore },
  identity: { asn: number; mntner: string; method: AuthMethod },
): Promise<SessionGrant> {
  const { grant, write, actor } = await prepareSession(deps, identity);
  await execute(deps.store, [write.streamId], () => ({ writes: [write], result: undefined }), { actor, recordedAt: write.events[0].data.issued_at });
  return grant;
}

/** Why a session token was refused; the reason goes to the log only. */
export class InvalidSession extends Error {
  constructor(readonly reason: string) {
    super(reason);
    this.name = 'InvalidSession';
  }
}

/**
 * Verifies a session token against the published key set: EdDSA only (so `none`
 * and HS256 fail before any key is used), issuer and audience exact, expiry by
 * the service clock, and claims of the right types.
 */
export async function verifySession(deps: SessionDeps, token: string): Promise<SessionClaims> {
  const keyFor = async (header: JWTHeaderParameters) => {
    if (typeof header.kid !== 'string') throw new InvalidSession('token header has no kid');
    const key = await publishedKey(deps.pool, header.kid);
    if (!key) throw new InvalidSession(`kid ${header.kid} is not in the published key set`);
    return key;
  };
  let payload: JWTPayload;
  try {
    ({ payload } = await jwtVerify(token, keyFor, {
      algorithms: ALGORITHMS,
      issuer: deps.config.identityIssuer,
      audience: SESSION_AUDIENCE,
      currentDate: deps.now(),
      requiredClaims: ['sub', 'jti', 'iat', 'exp'],
    }));
  } catch (err) {
    if (err instanceof InvalidSession) throw err;
    if (err instanceof joseErrors.JOSEError) throw new InvalidSession(`${err.code}: ${err.message}`);
    throw err;
  }
  return checkClaims(payload);
}

function checkClaims(p: JWTPayload): SessionClaims {
  const { sub, jti, iat, exp, asn, mnt, method } = p as JWTPayload & { asn?: unknown; mnt?: unknown; method?: unknown };
  if (typeof asn !== 'number' || !Number.isInteger(asn)) throw new InvalidSession('asn claim missing or not an integer');
  if (mnt !== undefined && typeof mnt !== 'string') throw new InvalidSession('mnt claim is not a string');
  if (typeof method !== 'string' || !(AUTH_METHODS as string[]).includes(method)) throw new InvalidSession('method claim missing or unknown');
  if (typeof mnt === 'string' && sub !== subjectOf(mnt, asn)) throw new InvalidSession('sub does not match mnt and asn');
  return { sub: sub!, jti: jti!, iat: iat!, exp: exp!, asn, mnt, method: method as AuthMethod };
}
