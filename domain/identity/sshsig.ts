// STUB — owned by the signature-verification helper, who replaces the bodies. Signatures are the agreed interface.

export type SshVerdict =
  | { ok: true; key: string }
  | { ok: false; reason: 'malformed' | 'namespace' | 'unsupported-algorithm' | 'hardware-key' | 'unknown-key' | 'bad-signature'; detail: string };

/**
 * Verifies an armored SSHSIG (`-----BEGIN SSH SIGNATURE-----`) over `message` (the challenge nonce):
 * namespace exactly `namespace`, embedded public key byte-for-byte equal to one of `registeredKeys`
 * (`<type> <base64>` as in the registry), algorithm ed25519, ecdsa-nistp256/384/521, rsa-sha2-256/512;
 * `sk-*` keys refused with reason `hardware-key`.
 */
export function verifySshSignature(_input: { armored: string; message: string; namespace: string; registeredKeys: readonly string[] }): SshVerdict {
  throw new Error('verifySshSignature: not implemented yet');
}
