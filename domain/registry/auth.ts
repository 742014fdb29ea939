/**
 * Mntner `auth:` lines as they occur in the dn42 registry, sorted into the ones
 * a maintainer can prove control with (PGP, SSH) and the rest, which are ignored.
 */

export type AuthMethod =
  | { kind: 'pgp'; method: 'pgp-fingerprint'; fingerprint: string }
  | { kind: 'pgp-key-cert'; keyCert: string; keyId: string }
  | { kind: 'ssh'; method: string; key: string; comment: string; hardwareKey: boolean }
  | { kind: 'ignored'; reason: string };

/** SSH key types the registry uses; `sk-*` are hardware keys (FIDO), listed but marked. */
export const SSH_KEY_TYPES: readonly string[] = [
  'ssh-ed25519',
  'ssh-rsa',
  'ecdsa-sha2-nistp256',
  'ecdsa-sha2-nistp384',
  'ecdsa-sha2-nistp521',
  'sk-ssh-ed25519@openssh.com',
  'sk-ecdsa-sha2-nistp256@openssh.com',
];

/**
 * A PGP fingerprint as 40 upper-case hex digits, whatever the spacing and case it
 * was written with (`fingerpr:` of key-certs has spaces); null when it is not one.
 */
export function normaliseFingerprint(text: string): string | null {
  const compact = text.replace(/\s+/g, '').toUpperCase();
  return /^[0-9A-F]{40}$/.test(compact) ? compact : null;
}

export function classifyAuth(line: string): AuthMethod {
  const text = line.replace(/\s+/g, ' ').trim();
  const [method = '', ...rest] = text.split(' ');
  const lower = method.toLowerCase();
  if (lower === 'pgp-fingerprint') {
    const fingerprint = normaliseFingerprint(rest.join(''));
    return fingerprint ? { kind: 'pgp', method: 'pgp-fingerprint', fingerprint } : { kind: 'ignored', reason: 'pgp-fingerprint without 40 hex digits' };
  }
  const keyCert = /^PGPKEY-([0-9A-F]{8})$/i.exec(method);
  if (keyCert && rest.length === 0) return { kind: 'pgp-key-cert', keyCert: method.toUpperCase(), keyId: keyCert[1].toUpperCase() };
  if (SSH_KEY_TYPES.includes(lower)) {
    const [key = '', ...comment] = rest;
    if (!sshBlobMatches(lower, key)) return { kind: 'ignored', reason: `${lower} key is not a valid key blob` };
    return { kind: 'ssh', method: lower, key: `${lower} ${key}`, comment: comment.join(' '), hardwareKey: lower.startsWith('sk-') };
  }
  return { kind: 'ignored', reason: `unsupported auth method ${method || '(empty)'}` };
}

/**
 * The base64 blob of an OpenSSH public key starts with its own type as an SSH
 * string (uint32 length, bytes), then its key material. Checking that throws out
 * truncated or mistyped keys, which no signature could ever match.
 */
function sshBlobMatches(type: string, base64: string): boolean {
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(base64)) return false;
  const blob = Buffer.from(base64, 'base64');
  if (blob.length < 4) return false;
  const length = blob.readUInt32BE(0);
  if (length !== type.length || blob.subarray(4, 4 + length).toString('latin1') !== type) return false;
  // Key material follows the type; a blob that ends there is a truncated key.
  if (blob.length < 8 + length) return false;
  const material = blob.readUInt32BE(4 + length);
  return material > 0 && 8 + length + material <= blob.length;
}
