import { randomBytes, randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import type { PortalProfile } from '../../domain/autopeering/portal-profile.js';
import { sha256Hex } from '../../domain/sha256.js';
import type { MigrationSet } from '../db/migrate.js';
import { withTransaction, type Pool, type Queryable } from '../db/pool.js';

/** The `portal_sessions` and `portal_login_transactions` tables (applied with the other state migrations). */
export const portalMigrations: MigrationSet = { name: 'portal', dir: fileURLToPath(new URL('./migrations', import.meta.url)) };

/** Lifetime of a portal session token, from the login (fixed, not sliding; docs/decisions.md). */
export const PORTAL_SESSION_TTL_SECONDS = 12 * 60 * 60;
/** Lifetime of the one-time handoff code of the callback redirect. */
export const HANDOFF_TTL_SECONDS = 120;
/** Lifetime of a login transaction (state, nonce, PKCE verifier): the 15-minute challenge fits inside it. */
export const LOGIN_TTL_SECONDS = 20 * 60;

/** 256 random bits, base64url: session tokens, handoff codes, state, nonce. */
export const randomSecret = (): string => randomBytes(32).toString('base64url');

/** The upstream tokens of a session; they never leave the server. */
export interface UpstreamTokens {
  accessToken: string | null;
  accessExpiresAt: Date | null;
  refreshToken: string | null;
}

export interface PortalSession {
  id: string;
  profile: PortalProfile;
  claims: Record<string, unknown>;
  expiresAt: Date;
  upstream: UpstreamTokens;
}

export interface NewPortalSession {
  profile: PortalProfile;
  claims: Record<string, unknown>;
  upstream: UpstreamTokens;
  now: Date;
  /** Default `PORTAL_SESSION_TTL_SECONDS`. */
  ttlSeconds?: number;
}

const after = (now: Date, seconds: number) => new Date(now.getTime() + seconds * 1000);

const INSERT = `INSERT INTO portal_sessions
  (id, token_sha256, handoff_sha256, handoff_expires_at, created_at, expires_at, sub, asn, mnt, route, route6, claims, claims_at,
   access_token, access_expires_at, refresh_token)
  VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $5, $13, $14, $15)`;

async function insert(db: Queryable, input: NewPortalSession, tokenSha: string | null, handoffSha: string | null): Promise<{ id: string; expiresAt: Date }> {
  const id = randomUUID();
  const expiresAt = after(input.now, input.ttlSeconds ?? PORTAL_SESSION_TTL_SECONDS);
  const p = input.profile;
  await db.query(INSERT, [
    id,
    tokenSha,
    handoffSha,
    handoffSha ? after(input.now, HANDOFF_TTL_SECONDS) : null,
    input.now,
    expiresAt,
    p.sub,
    p.asn,
    p.mntner,
    p.route,
    p.route6,
    JSON.stringify(input.claims),
    input.upstream.accessToken,
    input.upstream.accessExpiresAt,
    input.upstream.refreshToken,
  ]);
  return { id, expiresAt };
}

/**
 * A session opened by the login callback: it has no token yet, only a one-time
 * handoff code (returned here in plaintext, stored as sha256) that
 * `exchangeHandoff` trades for the token.
 */
export async function openWithHandoff(db: Queryable, input: NewPortalSession): Promise<{ id: string; handoff: string }> {
  const handoff = randomSecret();
  const { id } = await insert(db, input, null, sha256Hex(handoff));
  return { id, handoff };
}

/** A session with its token at once (the specs' `givenPortalSession`; no login flow issues one this way). */
export async function openWithToken(db: Queryable, input: NewPortalSession): Promise<{ id: string; token: string; expiresAt: Date }> {
  const token = randomSecret();
  const { id, expiresAt } = await insert(db, input, sha256Hex(token), null);
  return { id, token, expiresAt };
}

interface Row {
  id: string;
  sub: string;
  asn: string | null;
  mnt: string | null;
  route: string[];
  route6: string[];
  claims: Record<string, unknown>;
  expires_at: Date;
  access_token: string | null;
  access_expires_at: Date | null;
  refresh_token: string | null;
}

const COLUMNS = 'id, sub, asn, mnt, route, route6, claims, expires_at, access_token, access_expires_at, refresh_token';

function sessionOf(row: Row): PortalSession {
  return {
    id: row.id,
    profile: { sub: row.sub, asn: row.asn === null ? null : Number(row.asn), mntner: row.mnt, route: row.route, route6: row.route6 },
    claims: row.claims,
    expiresAt: row.expires_at,
    upstream: { accessToken: row.access_token, accessExpiresAt: row.access_expires_at, refreshToken: row.refresh_token },
  };
}

/**
 * Trades a handoff code for the session token: the first use issues a fresh
 * token (the session's credential rotates from the code to the token) and voids
 * the code. Race: two exchanges of one code at once both match the row, but the
 * UPDATE takes its lock and the loser re-checks `handoff_sha256` against the
 * winner's committed row, finds it null and updates nothing.
 */
export async function exchangeHandoff(db: Queryable, handoff: string, now: Date): Promise<{ session: PortalSession; token: string } | undefined> {
  const token = randomSecret();
  const { rows } = await db.query<Row>(
    `UPDATE portal_sessions SET token_sha256 = $2, handoff_sha256 = NULL, handoff_expires_at = NULL
      WHERE handoff_sha256 = $1 AND handoff_expires_at > $3 AND expires_at > $3 AND revoked_at IS NULL
      RETURNING ${COLUMNS}`,
    [sha256Hex(handoff), sha256Hex(token), now],
  );
  return rows[0] ? { session: sessionOf(rows[0]), token } : undefined;
}

/** The live session of a token (not expired, not revoked), or undefined. */
export async function findPortalSession(db: Queryable, token: string, now: Date): Promise<PortalSession | undefined> {
  const { rows } = await db.query<Row>(`SELECT ${COLUMNS} FROM portal_sessions WHERE token_sha256 = $1 AND expires_at > $2 AND revoked_at IS NULL`, [
    sha256Hex(token),
    now,
  ]);
  return rows[0] ? sessionOf(rows[0]) : undefined;
}

/** Ends one session (logout); its token is refused from now on. */
export async function revokePortalSession(db: Queryable, id: string, now: Date): Promise<void> {
  await db.query('UPDATE portal_sessions SET revoked_at = $2, access_token = NULL, refresh_token = NULL WHERE id = $1 AND revoked_at IS NULL', [id, now]);
}

/** Replaces the cached claims (and, when given, the upstream tokens) of a session. */
export async function updateClaims(
  db: Queryable,
  id: string,
  input: { profile: PortalProfile; claims: Record<string, unknown>; upstream?: UpstreamTokens; now: Date },
): Promise<void> {
  const p = input.profile;
  const u = input.upstream;
  await db.query(
    `UPDATE portal_sessions SET sub = $2, asn = $3, mnt = $4, route = $5, route6 = $6, claims = $7, claims_at = $8,
       access_token = CASE WHEN $9 THEN $10 ELSE access_token END,
       access_expires_at = CASE WHEN $9 THEN $11 ELSE access_expires_at END,
       refresh_token = CASE WHEN $9 THEN $12 ELSE refresh_token END
     WHERE id = $1`,
    [
      id,
      p.sub,
      p.asn,
      p.mntner,
      p.route,
      p.route6,
      JSON.stringify(input.claims),
      input.now,
      u !== undefined,
      u?.accessToken ?? null,
      u?.accessExpiresAt ?? null,
      u?.refreshToken ?? null,
    ],
  );
}

export interface LoginTransaction {
  nonce: string;
  codeVerifier: string;
  /** Site-relative path to return to, or null. */
  next: string | null;
}

/** Stores a login transaction under the sha256 of its `state`. */
export async function beginLogin(db: Queryable, state: string, tx: LoginTransaction, now: Date): Promise<void> {
  await db.query('INSERT INTO portal_login_transactions (state_sha256, nonce, code_verifier, next, created_at, expires_at) VALUES ($1, $2, $3, $4, $5, $6)', [
    sha256Hex(state),
    tx.nonce,
    tx.codeVerifier,
    tx.next,
    now,
    after(now, LOGIN_TTL_SECONDS),
  ]);
}

/** Takes (deletes) the login transaction of a `state`: one use; undefined when unknown or expired. */
export async function takeLogin(db: Queryable, state: string, now: Date): Promise<LoginTransaction | undefined> {
  const { rows } = await db.query<{ nonce: string; code_verifier: string; next: string | null; expires_at: Date }>(
    'DELETE FROM portal_login_transactions WHERE state_sha256 = $1 RETURNING nonce, code_verifier, next, expires_at',
    [sha256Hex(state)],
  );
  const row = rows[0];
  if (!row || row.expires_at <= now) return undefined;
  return { nonce: row.nonce, codeVerifier: row.code_verifier, next: row.next };
}

/** Deletes expired sessions (a day after they expired) and expired login transactions; returns how many rows. */
export async function prunePortal(db: Queryable, now: Date): Promise<number> {
  const a = await db.query('DELETE FROM portal_sessions WHERE expires_at < $1', [after(now, -86_400)]);
  const b = await db.query('DELETE FROM portal_login_transactions WHERE expires_at < $1', [now]);
  return (a.rowCount ?? 0) + (b.rowCount ?? 0);
}

/**
 * Runs `work` with the session's upstream tokens while holding its row lock, so
 * two refreshes of one session never both spend the same (rotating) refresh
 * token. `work` saves new tokens through `save` on the same connection; they are
 * committed even when `work` answers an error value afterwards.
 */
export async function withUpstreamTokens<T>(
  pool: Pool,
  id: string,
  work: (upstream: UpstreamTokens, save: (tokens: UpstreamTokens) => Promise<void>) => Promise<T>,
): Promise<T> {
  return withTransaction(pool, async (client) => {
    const { rows } = await client.query<{ access_token: string | null; access_expires_at: Date | null; refresh_token: string | null }>(
      'SELECT access_token, access_expires_at, refresh_token FROM portal_sessions WHERE id = $1 FOR UPDATE',
      [id],
    );
    const row = rows[0];
    const upstream: UpstreamTokens = row
      ? { accessToken: row.access_token, accessExpiresAt: row.access_expires_at, refreshToken: row.refresh_token }
      : { accessToken: null, accessExpiresAt: null, refreshToken: null };
    const save = async (tokens: UpstreamTokens) => {
      await client.query('UPDATE portal_sessions SET access_token = $2, access_expires_at = $3, refresh_token = $4 WHERE id = $1', [
        id,
        tokens.accessToken,
        tokens.accessExpiresAt,
        tokens.refreshToken,
      ]);
    };
    return work(upstream, save);
  });
}
