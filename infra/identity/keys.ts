import {
  createCipheriv,
  createDecipheriv,
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  hkdfSync,
  randomBytes,
  randomUUID,
  type KeyObject,
} from 'node:crypto';
import { fileURLToPath } from 'node:url';
import type { JWK } from 'jose';
import { ConfigError, type Config } from '../config.js';
import type { MigrationSet } from '../db/migrate.js';
import { advisoryKey, withTransaction, type Pool, type Queryable } from '../db/pool.js';

/**
 * The identity service's signing keys: Ed25519 pairs in `identity_signing_keys`,
 * the private half encrypted with AES-256-GCM under a key derived from
 * IDENTITY_KEY_SECRET, so every instance signs with the same set.
 *
 * - The newest unretired key (highest `seq`) signs.
 * - Every unretired key is published in the JWKS, so a token stays verifiable
 *   after a rotation for as long as it lives.
 * - `rotateSigningKeys` adds a key and retires keys whose successor is older than
 *   the longest lifetime of a token they could have signed (plus clock skew).
 */
export const signingKeyMigrations: MigrationSet = { name: 'identity-keys', dir: fileURLToPath(new URL('./key-migrations', import.meta.url)) };

/** The longest lifetime of a token these keys sign: the 2-hour session JWT (access and id tokens live 1 hour). */
export const MAX_TOKEN_LIFETIME_SECONDS = 2 * 60 * 60;
/** Clock skew between instances and consumers tolerated before a superseded key is retired. */
export const RETIRE_LEEWAY_SECONDS = 5 * 60;

/** Used only while IDENTITY_KEY_SECRET is unset and the issuer is a loopback address (development, tests). */
const DEVELOPMENT_SECRET = 'dn42-control development signing-key secret: not for production';
const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

export interface SigningKey {
  kid: string;
  privateKey: KeyObject;
}

/**
 * The secret that encrypts the keys. Unset is allowed only for a loopback issuer:
 * a deployment with a public issuer must configure it, else the identity role
 * does not start (a known development secret would let anyone read the keys
 * from a database dump).
 */
export function keySecret(config: Config): string {
  if (config.identityKeySecret) return config.identityKeySecret;
  const host = new URL(config.identityIssuer).hostname;
  if (LOOPBACK_HOSTS.has(host) || host.endsWith('.localhost')) return DEVELOPMENT_SECRET;
  throw new ConfigError('IDENTITY_KEY_SECRET', `required when IDENTITY_ISSUER (${config.identityIssuer}) is not a loopback address`);
}

function encryptionKey(secret: string): Buffer {
  return Buffer.from(hkdfSync('sha256', secret, 'dn42-control identity signing keys', 'aes-256-gcm v1', 32));
}

/** `iv (12) | tag (16) | ciphertext`; the kid is bound as associated data, so rows cannot be swapped. */
function seal(secret: string, kid: string, plaintext: Buffer): Buffer {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', encryptionKey(secret), iv);
  cipher.setAAD(Buffer.from(kid, 'utf8'));
  const body = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), body]);
}

function open(secret: string, kid: string, sealed: Buffer): Buffer {
  const decipher = createDecipheriv('aes-256-gcm', encryptionKey(secret), sealed.subarray(0, 12));
  decipher.setAAD(Buffer.from(kid, 'utf8'));
  decipher.setAuthTag(sealed.subarray(12, 28));
  try {
    return Buffer.concat([decipher.update(sealed.subarray(28)), decipher.final()]);
  } catch {
    throw new ConfigError('IDENTITY_KEY_SECRET', `cannot decrypt signing key ${kid}: the secret differs from the one it was stored with`);
  }
}

/** Inserts a fresh Ed25519 key; it signs from now on. */
async function insertKey(db: Queryable, secret: string, now: Date): Promise<string> {
  const kid = randomUUID();
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const jwk = publicKey.export({ format: 'jwk' });
  const publicJwk: JWK = { kty: 'OKP', crv: 'Ed25519', x: jwk.x, kid, alg: 'EdDSA', use: 'sig' };
  const pkcs8 = privateKey.export({ format: 'der', type: 'pkcs8' });
  await db.query(`INSERT INTO identity_signing_keys (kid, public_jwk, private_key, created_at) VALUES ($1, $2, $3, $4)`, [
    kid,
    publicJwk,
    seal(secret, kid, pkcs8),
    now,
  ]);
  return kid;
}

const ROTATION_LOCK = advisoryKey('dn42-control:identity-signing-keys');

/** Decrypted private keys by kid (and the secret that opened them): decrypting on every signature would be wasted work. */
const decrypted = new Map<string, { secret: string; key: KeyObject }>();

/**
 * The newest unretired key's row. On an empty table the first key is created;
 * the transaction-scoped advisory lock makes instances that start together agree on it.
 */
async function ensureSigningKey(pool: Pool, config: Config, now: Date): Promise<{ kid: string; private_key: Buffer }> {
  const row = await newestKey(pool);
  if (row) return row;
  const secret = keySecret(config);
  return withTransaction(pool, async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock($1)', [ROTATION_LOCK]);
    const existing = await newestKey(tx);
    if (existing) return existing;
    await insertKey(tx, secret, now);
    return (await newestKey(tx))!;
  });
}

/**
 * The public key set for publishing, creating the first key on an empty table.
 * Nothing is decrypted, so it works whatever IDENTITY_KEY_SECRET says.
 */
export async function publishedKeySet(pool: Pool, config: Config, now: Date): Promise<JWK[]> {
  const keys = await publishedKeys(pool);
  if (keys.length > 0) return keys;
  await ensureSigningKey(pool, config, now);
  return publishedKeys(pool);
}

/** The key that signs now (the first call on an empty table creates one). */
export async function currentSigningKey(pool: Pool, config: Config, now: Date): Promise<SigningKey> {
  const secret = keySecret(config);
  const row = await ensureSigningKey(pool, config, now);
  let cached = decrypted.get(row.kid);
  if (cached?.secret !== secret) {
    cached = { secret, key: createPrivateKey({ key: open(secret, row.kid, row.private_key), format: 'der', type: 'pkcs8' }) };
    decrypted.set(row.kid, cached);
  }
  return { kid: row.kid, privateKey: cached.key };
}

async function newestKey(db: Queryable): Promise<{ kid: string; private_key: Buffer } | undefined> {
  const { rows } = await db.query(`SELECT kid, private_key FROM identity_signing_keys WHERE retired_at IS NULL ORDER BY seq DESC LIMIT 1`);
  return rows[0];
}

/** The public key set: every unretired key, newest first, public parts only. */
export async function publishedKeys(db: Queryable): Promise<JWK[]> {
  const { rows } = await db.query(`SELECT public_jwk FROM identity_signing_keys WHERE retired_at IS NULL ORDER BY seq DESC`);
  return rows.map((r: { public_jwk: JWK }) => r.public_jwk);
}

/** One published public key by kid, or undefined when unknown or retired. */
export async function publishedKey(db: Queryable, kid: string): Promise<KeyObject | undefined> {
  const { rows } = await db.query(`SELECT public_jwk FROM identity_signing_keys WHERE kid = $1 AND retired_at IS NULL`, [kid]);
  return rows[0] ? createPublicKey({ key: rows[0].public_jwk as import('node:crypto').JsonWebKey, format: 'jwk' }) : undefined;
}

export interface Rotation {
  /** The kid of the key that signs from now on. */
  added: string;
  /** Keys taken out of the published set (their private half erased). */
  retired: string[];
  /** Every kid still published, newest first. */
  published: string[];
}

/**
 * Adds a key that signs from now on; older keys stay published. A key is retired
 * (unpublished, private half erased) once its successor has existed for longer
 * than MAX_TOKEN_LIFETIME_SECONDS + RETIRE_LEEWAY_SECONDS: no token it signed can
 * still be valid.
 */
export async function rotateSigningKeys(pool: Pool, config: Config, now: Date): Promise<Rotation> {
  const secret = keySecret(config);
  return withTransaction(pool, async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock($1)', [ROTATION_LOCK]);
    const cutoff = new Date(now.getTime() - (MAX_TOKEN_LIFETIME_SECONDS + RETIRE_LEEWAY_SECONDS) * 1000);
    const { rows: retired } = await tx.query(
      `UPDATE identity_signing_keys k SET retired_at = $1, private_key = NULL
        WHERE retired_at IS NULL
          AND EXISTS (SELECT 1 FROM identity_signing_keys newer WHERE newer.seq > k.seq AND newer.created_at <= $2)
        RETURNING kid`,
      [now, cutoff],
    );
    const added = await insertKey(tx, secret, now);
    const { rows: published } = await tx.query(`SELECT kid FROM identity_signing_keys WHERE retired_at IS NULL ORDER BY seq DESC`);
    for (const r of retired) decrypted.delete(r.kid as string);
    return { added, retired: retired.map((r: { kid: string }) => r.kid), published: published.map((r: { kid: string }) => r.kid) };
  });
}
