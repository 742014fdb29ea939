import { createPublicKey } from 'node:crypto';
import { CompactEncrypt } from 'jose';
import { sha256Hex } from '../domain/sha256.js';

/**
 * The WireGuard private key encrypted to the offline recovery key, as a compact
 * JWE (RFC 7516): RSA keys with `RSA-OAEP-256`, EC and X25519/X448 keys with
 * `ECDH-ES+A256KW`; content `A256GCM`; `kid` is the key's fingerprint (sha256
 * of its DER, as `/agent/recovery-public-key` gives it). Only the holder of the
 * offline private key can open it (e.g. with `jose` or any JOSE library).
 * Null for a key type that cannot encrypt (Ed25519).
 */
export async function escrowPrivateKey(privateKey: string, recoveryPem: string): Promise<string | null> {
  const key = createPublicKey(recoveryPem);
  const type = key.asymmetricKeyType;
  const alg = type === 'rsa' || type === 'rsa-pss' ? 'RSA-OAEP-256' : type === 'ec' || type === 'x25519' || type === 'x448' ? 'ECDH-ES+A256KW' : null;
  if (!alg) return null;
  const kid = sha256Hex(key.export({ type: 'spki', format: 'der' }));
  return new CompactEncrypt(new TextEncoder().encode(privateKey)).setProtectedHeader({ alg, enc: 'A256GCM', kid, cty: 'wireguard-private-key' }).encrypt(key);
}
