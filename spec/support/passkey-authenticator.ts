import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';

/**
 * A software WebAuthn authenticator for HTTP specs: ES256 credentials with
 * `none` attestation, built by hand (CBOR, authenticator data, client data) the
 * way a browser and a platform authenticator would. The browser spec exercises a
 * real one (Chromium's virtual authenticator).
 */

type Cbor = number | string | Buffer | Map<Cbor, Cbor>;

function head(major: number, length: number): Buffer {
  if (length < 24) return Buffer.from([(major << 5) | length]);
  if (length < 0x100) return Buffer.from([(major << 5) | 24, length]);
  if (length < 0x10000) return Buffer.from([(major << 5) | 25, length >> 8, length & 0xff]);
  const b = Buffer.alloc(5);
  b[0] = (major << 5) | 26;
  b.writeUInt32BE(length, 1);
  return b;
}

/** Just the CBOR WebAuthn needs: integers, text, bytes, maps. */
export function cbor(value: Cbor): Buffer {
  if (typeof value === 'number') return value >= 0 ? head(0, value) : head(1, -1 - value);
  if (typeof value === 'string') {
    const text = Buffer.from(value, 'utf8');
    return Buffer.concat([head(3, text.length), text]);
  }
  if (Buffer.isBuffer(value)) return Buffer.concat([head(2, value.length), value]);
  const parts = [head(5, value.size)];
  for (const [k, v] of value) parts.push(cbor(k), cbor(v));
  return Buffer.concat(parts);
}

const b64url = (b: Buffer | string) => Buffer.from(b).toString('base64url');
const sha256 = (b: Buffer | string) => createHash('sha256').update(b).digest();

export interface SoftCredential {
  id: Buffer;
  privateKey: KeyObject;
  publicKey: KeyObject;
  counter: number;
  userHandle?: string;
}

export interface CreationOptions {
  challenge: string;
  rp: { id?: string };
  user: { id: string };
}

export interface RequestOptions {
  challenge: string;
  rpId?: string;
}

export class SoftAuthenticator {
  readonly credentials: SoftCredential[] = [];

  constructor(
    readonly origin: string,
    readonly rpId = new URL(origin).hostname,
  ) {}

  /** A new credential for the creation options, as the browser's JSON (`toJSON()` of the PublicKeyCredential). */
  create(options: CreationOptions, overrides: { origin?: string; credential?: SoftCredential; type?: string } = {}): Record<string, unknown> {
    const credential = overrides.credential ?? this.newCredential(options.user.id);
    const jwk = credential.publicKey.export({ format: 'jwk' });
    const coseKey = cbor(
      new Map<Cbor, Cbor>([
        [1, 2],
        [3, -7],
        [-1, 1],
        [-2, Buffer.from(jwk.x!, 'base64url')],
        [-3, Buffer.from(jwk.y!, 'base64url')],
      ]),
    );
    const idLength = Buffer.alloc(2);
    idLength.writeUInt16BE(credential.id.length);
    const authData = Buffer.concat([
      sha256(options.rp.id ?? this.rpId),
      Buffer.from([0x45]),
      counterBytes(credential.counter),
      Buffer.alloc(16),
      idLength,
      credential.id,
      coseKey,
    ]);
    const attestationObject = cbor(
      new Map<Cbor, Cbor>([
        ['fmt', 'none'],
        ['attStmt', new Map()],
        ['authData', authData],
      ]),
    );
    const clientData = JSON.stringify({
      type: overrides.type ?? 'webauthn.create',
      challenge: options.challenge,
      origin: overrides.origin ?? this.origin,
      crossOrigin: false,
    });
    return {
      id: b64url(credential.id),
      rawId: b64url(credential.id),
      type: 'public-key',
      authenticatorAttachment: 'platform',
      clientExtensionResults: {},
      response: {
        clientDataJSON: b64url(clientData),
        attestationObject: b64url(attestationObject),
        transports: ['internal', 'hybrid'],
        publicKeyAlgorithm: -7,
      },
    };
  }

  /** An assertion by `credential` (default: the first) for the request options. */
  get(options: RequestOptions, overrides: { origin?: string; credential?: SoftCredential; tamper?: boolean } = {}): Record<string, unknown> {
    const credential = overrides.credential ?? this.credentials[0];
    credential.counter += 1;
    const authData = Buffer.concat([sha256(options.rpId ?? this.rpId), Buffer.from([0x05]), counterBytes(credential.counter)]);
    const clientData = JSON.stringify({ type: 'webauthn.get', challenge: options.challenge, origin: overrides.origin ?? this.origin, crossOrigin: false });
    const signature = sign('sha256', Buffer.concat([authData, sha256(clientData)]), credential.privateKey);
    if (overrides.tamper) signature[signature.length - 1] ^= 0x01;
    return {
      id: b64url(credential.id),
      rawId: b64url(credential.id),
      type: 'public-key',
      authenticatorAttachment: 'platform',
      clientExtensionResults: {},
      response: {
        clientDataJSON: b64url(clientData),
        authenticatorData: b64url(authData),
        signature: b64url(signature),
        ...(credential.userHandle ? { userHandle: credential.userHandle } : {}),
      },
    };
  }

  private newCredential(userHandle: string): SoftCredential {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const credential = { id: randomBytes(32), privateKey, publicKey, counter: 0, userHandle };
    this.credentials.push(credential);
    return credential;
  }
}

function counterBytes(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n);
  return b;
}
