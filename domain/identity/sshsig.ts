import { createHash, createPublicKey, verify, type JsonWebKey, type KeyObject } from 'node:crypto';

/**
 * SSH signatures (`ssh-keygen -Y sign`) as OpenSSH's PROTOCOL.sshsig defines them,
 * parsed by hand (no library reads the SSHSIG framing) and verified with node:crypto.
 * Pure: no I/O, no clock.
 *
 * Reasons, in the order they are checked (the first that applies wins):
 * - `malformed`: not an SSHSIG armor, a blob that does not parse, a key that does not load;
 * - `hardware-key`: an `sk-*` (FIDO) key or signature, refused by name;
 * - `namespace`: the signature's namespace is not the expected one;
 * - `unknown-key`: the embedded public key is not, byte for byte, one of the registered keys;
 * - `unsupported-algorithm`: a key or signature algorithm outside the supported set
 *   (`ssh-rsa` SHA-1 signatures included), or a hash other than sha256/sha512;
 * - `bad-signature`: the signature does not verify over the message.
 */
export type SshVerdict =
  | { ok: true; key: string }
  | { ok: false; reason: 'malformed' | 'namespace' | 'unsupported-algorithm' | 'hardware-key' | 'unknown-key' | 'bad-signature'; detail: string };

type Refusal = Extract<SshVerdict, { ok: false }>;

const BEGIN = '-----BEGIN SSH SIGNATURE-----';
const END = '-----END SSH SIGNATURE-----';
const MAGIC = Buffer.from('SSHSIG', 'latin1');
/** An armored signature of the largest supported key (RSA 16384) stays well below this. */
const MAX_ARMOR = 16_384;

/**
 * Verifies an armored SSHSIG (`-----BEGIN SSH SIGNATURE-----`) over `message` (the challenge nonce):
 * namespace exactly `namespace`, embedded public key byte-for-byte equal to one of `registeredKeys`
 * (`<type> <base64>` as in the registry), algorithm ed25519, ecdsa-nistp256/384/521, rsa-sha2-256/512;
 * `sk-*` keys refused with reason `hardware-key`.
 *
 * The signature may cover the message alone or the message and one trailing newline:
 * `echo nonce | ssh-keygen -Y sign` signs the newline too, and since the nonce itself is
 * still required, accepting it takes nothing from the replay protection.
 */
export function verifySshSignature(input: { armored: string; message: string; namespace: string; registeredKeys: readonly string[] }): SshVerdict {
  try {
    return check(input);
  } catch (err) {
    if (err instanceof Refused) return err.verdict;
    throw err;
  }
}

function check(input: { armored: string; message: string; namespace: string; registeredKeys: readonly string[] }): SshVerdict {
  const sig = parseSshSig(dearmor(input.armored));
  const keyType = new Reader(sig.publicKey, 'public key').string().toString('latin1');
  const sigType = new Reader(sig.signature, 'signature').string().toString('latin1');
  if (keyType.startsWith('sk-') || sigType.startsWith('sk-')) {
    refuse(
      'hardware-key',
      `hardware security keys (${keyType}) cannot be verified here; sign with a software ed25519, ecdsa or rsa key registered on your maintainer`,
    );
  }
  if (sig.namespace !== input.namespace)
    refuse(
      'namespace',
      `the signature namespace is ${JSON.stringify(sig.namespace.slice(0, 64))}, expected "${input.namespace}" (ssh-keygen -Y sign -n ${input.namespace})`,
    );
  const registered = input.registeredKeys.find((key) => registeredBlob(key)?.equals(sig.publicKey));
  if (registered === undefined) refuse('unknown-key', `the signing key (${keyType}) is not a key registered for this option`);
  const digest = hashAlgorithm(sig.hashAlgorithm);
  const verifier = signatureVerifier(keyType, sig.publicKey, sig.signature);
  for (const message of [input.message, `${input.message}\n`]) {
    if (verifies(verifier, signedData(sig, createHash(digest).update(message, 'utf8').digest()))) return { ok: true, key: registered };
  }
  return refuse('bad-signature', 'the signature does not verify over the challenge nonce');
}

class Refused extends Error {
  constructor(readonly verdict: Refusal) {
    super(verdict.detail);
  }
}

function refuse(reason: Refusal['reason'], detail: string): never {
  throw new Refused({ ok: false, reason, detail });
}

/** Reads SSH wire format: uint32 big-endian lengths before strings and mpints (RFC 4251). */
class Reader {
  private offset = 0;
  constructor(
    private readonly buf: Buffer,
    private readonly what: string,
  ) {}

  uint32(): number {
    if (this.offset + 4 > this.buf.length) refuse('malformed', `${this.what} is truncated`);
    const value = this.buf.readUInt32BE(this.offset);
    this.offset += 4;
    return value;
  }

  string(): Buffer {
    const length = this.uint32();
    if (this.offset + length > this.buf.length) refuse('malformed', `${this.what} is truncated`);
    const value = this.buf.subarray(this.offset, this.offset + length);
    this.offset += length;
    return value;
  }

  /** An mpint's magnitude without the sign-padding zero bytes; negative values are refused. */
  unsignedMpint(): Buffer {
    const raw = this.string();
    if (raw.length > 0 && raw[0] & 0x80) refuse('malformed', `${this.what} has a negative integer`);
    let start = 0;
    while (start < raw.length && raw[start] === 0) start++;
    return raw.subarray(start);
  }

  end(): void {
    if (this.offset !== this.buf.length) refuse('malformed', `${this.what} has trailing bytes`);
  }
}

function dearmor(armored: string): Buffer {
  const text = armored.replace(/\r\n?/g, '\n').trim();
  if (text.length > MAX_ARMOR) refuse('malformed', 'the signature is too long');
  if (!text.startsWith(BEGIN) || !text.endsWith(END)) refuse('malformed', `the answer is not an SSH signature (${BEGIN} ... ${END})`);
  const body = text.slice(BEGIN.length, text.length - END.length).replace(/\s+/g, '');
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(body) || body.length % 4 !== 0) refuse('malformed', 'the signature armor is not base64');
  return Buffer.from(body, 'base64');
}

interface SshSig {
  publicKey: Buffer;
  namespace: string;
  reserved: Buffer;
  hashAlgorithm: string;
  signature: Buffer;
}

/** `SSHSIG`, uint32 version 1, string publickey, namespace, reserved, hash_algorithm, signature. */
function parseSshSig(blob: Buffer): SshSig {
  if (blob.length < MAGIC.length || !blob.subarray(0, MAGIC.length).equals(MAGIC)) refuse('malformed', 'the signature does not start with SSHSIG');
  const r = new Reader(blob.subarray(MAGIC.length), 'signature blob');
  const version = r.uint32();
  if (version !== 1) refuse('malformed', `SSHSIG version ${version} is not supported`);
  const sig: SshSig = {
    publicKey: r.string(),
    namespace: r.string().toString('utf8'),
    reserved: r.string(),
    hashAlgorithm: r.string().toString('latin1'),
    signature: r.string(),
  };
  r.end();
  return sig;
}

/** The blob of a registry key (`<type> <base64> [comment]`), or undefined when it does not decode. */
function registeredBlob(key: string): Buffer | undefined {
  const base64 = key.trim().split(/\s+/)[1];
  return base64 && /^[A-Za-z0-9+/]+={0,2}$/.test(base64) ? Buffer.from(base64, 'base64') : undefined;
}

function hashAlgorithm(name: string): 'sha256' | 'sha512' {
  if (name !== 'sha256' && name !== 'sha512') refuse('unsupported-algorithm', `hash algorithm ${name} is not supported (sha256, sha512)`);
  return name;
}

/** What the key signs: the SSHSIG preamble, namespace, reserved, hash algorithm and H(message). */
function signedData(sig: SshSig, hash: Buffer): Buffer {
  return Buffer.concat([
    MAGIC,
    sshString(Buffer.from(sig.namespace, 'utf8')),
    sshString(sig.reserved),
    sshString(Buffer.from(sig.hashAlgorithm, 'latin1')),
    sshString(hash),
  ]);
}

function sshString(value: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(value.length);
  return Buffer.concat([length, value]);
}

const b64url = (b: Buffer) => b.toString('base64url');

const CURVES: Record<string, { name: string; jwk: string; size: number; hash: string }> = {
  'ecdsa-sha2-nistp256': { name: 'nistp256', jwk: 'P-256', size: 32, hash: 'sha256' },
  'ecdsa-sha2-nistp384': { name: 'nistp384', jwk: 'P-384', size: 48, hash: 'sha384' },
  'ecdsa-sha2-nistp521': { name: 'nistp521', jwk: 'P-521', size: 66, hash: 'sha512' },
};

const RSA_HASHES: Record<string, string> = { 'rsa-sha2-256': 'sha256', 'rsa-sha2-512': 'sha512' };

type Verifier = (data: Buffer) => boolean;

/** OpenSSL throws rather than answers false on some malformed signatures (wrong length): both are a bad signature. */
function verifies(verifier: Verifier, data: Buffer): boolean {
  try {
    return verifier(data);
  } catch {
    return false;
  }
}

/** Loads the public key and the signature of its type into a node:crypto check over the signed data. */
function signatureVerifier(keyType: string, publicKey: Buffer, signature: Buffer): Verifier {
  const key = new Reader(publicKey, 'public key');
  key.string();
  const sig = new Reader(signature, 'signature');
  const sigType = sig.string().toString('latin1');
  const sigBytes = sig.string();
  sig.end();
  const curve = CURVES[keyType];
  if (keyType === 'ssh-ed25519') {
    const x = key.string();
    key.end();
    if (x.length !== 32) refuse('malformed', 'the ed25519 public key is not 32 bytes');
    expectSigType(sigType, keyType, ['ssh-ed25519']);
    const loaded = load({ kty: 'OKP', crv: 'Ed25519', x: b64url(x) });
    return (data) => verify(null, data, loaded, sigBytes);
  }
  if (curve) {
    const curveName = key.string().toString('latin1');
    const point = key.string();
    key.end();
    if (curveName !== curve.name) refuse('malformed', `the ${keyType} key names curve ${curveName}`);
    if (point.length !== 1 + 2 * curve.size || point[0] !== 0x04) refuse('malformed', `the ${keyType} key is not an uncompressed point`);
    expectSigType(sigType, keyType, [keyType]);
    const loaded = load({ kty: 'EC', crv: curve.jwk, x: b64url(point.subarray(1, 1 + curve.size)), y: b64url(point.subarray(1 + curve.size)) });
    const p1363 = ecdsaP1363(sigBytes, curve.size);
    return (data) => p1363 !== null && verify(curve.hash, data, { key: loaded, dsaEncoding: 'ieee-p1363' }, p1363);
  }
  if (keyType === 'ssh-rsa') {
    const e = key.unsignedMpint();
    const n = key.unsignedMpint();
    key.end();
    if (sigType === 'ssh-rsa') refuse('unsupported-algorithm', 'ssh-rsa (SHA-1) signatures are refused; ssh-keygen signs with rsa-sha2-512 by default');
    expectSigType(sigType, keyType, Object.keys(RSA_HASHES));
    const loaded = load({ kty: 'RSA', n: b64url(n), e: b64url(e) });
    // OpenSSH pads the signature to the modulus length; pad a short one the same way.
    const padded = sigBytes.length < n.length ? Buffer.concat([Buffer.alloc(n.length - sigBytes.length), sigBytes]) : sigBytes;
    return (data) => verify(RSA_HASHES[sigType], data, loaded, padded);
  }
  return refuse('unsupported-algorithm', `key type ${keyType} is not supported (ssh-ed25519, ecdsa-sha2-nistp256/384/521, ssh-rsa with rsa-sha2-256/512)`);
}

function expectSigType(sigType: string, keyType: string, allowed: readonly string[]): void {
  if (!allowed.includes(sigType)) refuse('unsupported-algorithm', `signature algorithm ${sigType} does not belong to a ${keyType} key`);
}

function load(jwk: JsonWebKey): KeyObject {
  try {
    return createPublicKey({ key: jwk, format: 'jwk' });
  } catch {
    return refuse('malformed', 'the public key could not be loaded');
  }
}

/** ECDSA signature blob (mpint r, mpint s) as IEEE P1363 (r and s left-padded to the field size); null when they do not fit. */
function ecdsaP1363(blob: Buffer, size: number): Buffer | null {
  const r = new Reader(blob, 'ecdsa signature');
  const parts = [r.unsignedMpint(), r.unsignedMpint()];
  r.end();
  if (parts.some((p) => p.length > size)) return null;
  return Buffer.concat(parts.map((p) => Buffer.concat([Buffer.alloc(size - p.length), p])));
}
