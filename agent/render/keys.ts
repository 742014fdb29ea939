import { createPrivateKey, createPublicKey, randomBytes } from 'node:crypto';

/**
 * WireGuard keys with node:crypto alone, so neither rendering nor key
 * registration needs the `wg` binary: a WireGuard key is a raw 32-byte X25519
 * key in base64. Node imports raw X25519 keys only as DER, so the key goes in
 * behind the fixed PKCS#8 prefix and comes out as the tail of its SPKI.
 */

const PKCS8_X25519_PREFIX = Buffer.from('302e020100300506032b656e04220420', 'hex');
const KEY_BYTES = 32;

/** Decodes a base64 WireGuard key; throws when it is not 32 bytes of canonical base64. */
export function decodeWireguardKey(base64: string): Buffer {
  const raw = Buffer.from(base64.trim(), 'base64');
  if (raw.length !== KEY_BYTES || raw.toString('base64') !== base64.trim()) throw new Error('invalid WireGuard key: expected 32 bytes in base64');
  return raw;
}

/** The public key of a WireGuard private key (what `wg pubkey` prints). */
export function wireguardPublicKey(privateKeyBase64: string): string {
  const der = Buffer.concat([PKCS8_X25519_PREFIX, decodeWireguardKey(privateKeyBase64)]);
  const spki = createPublicKey(createPrivateKey({ key: der, format: 'der', type: 'pkcs8' })).export({ format: 'der', type: 'spki' });
  return spki.subarray(spki.length - KEY_BYTES).toString('base64');
}

/** A new private key, clamped as `wg genkey` clamps it (RFC 7748). */
export function generateWireguardPrivateKey(): string {
  const key = randomBytes(KEY_BYTES);
  key[0] &= 248;
  key[31] = (key[31] & 127) | 64;
  return key.toString('base64');
}
