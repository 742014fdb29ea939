import { readCleartextMessage, readKeys, verify, type CleartextMessage, type Key } from 'openpgp';
import type { Config } from '../config.js';
import type { Logger } from '../logger.js';
import { registryClient } from '../registry/client.js';
import { fetchFromKeyserver } from './keyserver.js';

export type PgpVerdict =
  | { ok: true; fingerprint: string; keySource: 'registry' | 'keyserver' | 'request' }
  /** wrong answer (400), key found nowhere (422, detail asks for the key), verification machinery failed (503). */
  | { ok: false; status: 400 | 422 | 503; detail: string };

type KeySource = Extract<PgpVerdict, { ok: true }>['keySource'];

export const PGP_KEY_NOT_FOUND =
  'pgp key found nowhere: the registry has no key-cert and the key server no key with the registered fingerprint; submit again with public_key set to your ASCII-armored public key';
export const PGP_UNAVAILABLE = 'pgp verification unavailable';

/** Why one candidate key did not prove the answer: a wrong answer, in the caller's words. */
class WrongAnswer extends Error {}

/**
 * The four checks of the contract for a clearsigned answer: imported key's fingerprint equals
 * `fingerprint` (the registered one), signature good, primary-key fingerprint of the valid
 * signature matches, signed plaintext equals `nonce`. Key lookup: registry key-cert → key server
 * (`PGP_KEYSERVER_URL`, exact fingerprint, unreachable skipped) → `publicKey` from the request.
 *
 * The sources are asked lazily in that order and the first key that proves the answer wins:
 * a later source is asked only when the earlier ones have no key or their copy does not verify
 * (an outdated registry copy without the signing subkey, say). Every copy is pinned by the
 * registered primary fingerprint, and subkeys count only with a binding signature of that
 * primary key, so falling through lets no other key in. A key found somewhere but failing
 * is a wrong answer (400) with the first failure's reason; no key anywhere is 422.
 */
export async function verifyPgpAnswer(
  deps: { config: Config; log: Logger },
  input: { clearsigned: string; nonce: string; fingerprint: string; publicKey?: string },
): Promise<PgpVerdict> {
  const fingerprint = input.fingerprint.replace(/\s+/g, '').toUpperCase();
  let message: CleartextMessage;
  try {
    message = await readCleartextMessage({ cleartextMessage: input.clearsigned });
  } catch {
    return { ok: false, status: 400, detail: 'the answer is not a PGP clearsigned message (gpg --clearsign)' };
  }
  if (normaliseText(message.getText()) !== input.nonce.trim()) {
    return { ok: false, status: 400, detail: 'the signed text is not the challenge nonce' };
  }
  const failures: string[] = [];
  try {
    for (const [source, lookup] of keySources(deps, fingerprint, input.publicKey)) {
      const armored = await lookup();
      if (armored === null) continue;
      try {
        await provesAnswer(message, await signerKey(armored, fingerprint, source), deps.log);
        return { ok: true, fingerprint, keySource: source };
      } catch (err) {
        if (!(err instanceof WrongAnswer)) throw err;
        deps.log.info({ source, fingerprint, reason: err.message }, 'pgp answer refused with this key');
        failures.push(err.message);
      }
    }
  } catch (err) {
    deps.log.error({ err, fingerprint }, 'pgp verification failed');
    return { ok: false, status: 503, detail: PGP_UNAVAILABLE };
  }
  return failures.length > 0 ? { ok: false, status: 400, detail: failures[0] } : { ok: false, status: 422, detail: PGP_KEY_NOT_FOUND };
}

/** Clearsigned text as signed: line ends normalised, trailing whitespace of lines and the text dropped. */
function normaliseText(text: string): string {
  return text
    .replace(/\r\n?/g, '\n')
    .split('\n')
    .map((line) => line.replace(/[ \t]+$/, ''))
    .join('\n')
    .trim();
}

/** `[source, lookup]` in the contract's order; a lookup answers the armored key text or null when the source has none. */
function keySources(deps: { config: Config; log: Logger }, fingerprint: string, publicKey: string | undefined): [KeySource, () => Promise<string | null>][] {
  const { config, log } = deps;
  return [
    ['registry', () => fromRegistry(config, log, fingerprint)],
    ['keyserver', async () => (config.pgpKeyserverUrl ? fetchFromKeyserver(config.pgpKeyserverUrl, fingerprint, log) : null)],
    ['request', async () => (publicKey?.trim() ? publicKey : null)],
  ];
}

/**
 * The key-cert's armor. A replica that is not configured or does not answer is a
 * miss like an absent key-cert: the fingerprint, not the copy, is the trust anchor,
 * so the other sources are as good.
 */
async function fromRegistry(config: Config, log: Logger, fingerprint: string): Promise<string | null> {
  const client = registryClient(config, log);
  if (!client.configured) return null;
  try {
    return (await client.keyCert(fingerprint))?.armor ?? null;
  } catch (err) {
    log.warn({ err, fingerprint }, 'registry key-cert lookup failed; trying the next key source');
    return null;
  }
}

/** Check 1: of the keys in `armored`, the one whose primary fingerprint is the registered one. */
async function signerKey(armored: string, fingerprint: string, source: KeySource): Promise<Key> {
  const where = { registry: 'the registry key-cert', keyserver: 'the key server', request: 'public_key' }[source];
  let keys: Key[];
  try {
    keys = await readKeys({ armoredKeys: armored });
  } catch {
    throw new WrongAnswer(`the public key from ${where} could not be read`);
  }
  const key = keys.find((k) => k.getFingerprint().toUpperCase() === fingerprint);
  if (keys.some((k) => k.isPrivate())) throw new WrongAnswer(`${where} holds a private key; send only the public key (gpg --armor --export)`);
  if (!key) {
    const found = keys.map((k) => k.getFingerprint().toUpperCase()).join(', ');
    throw new WrongAnswer(`the public key from ${where} has fingerprint ${found}, not the registered ${fingerprint}`);
  }
  return key;
}

/**
 * Checks 2 and 3: a signature on the message that verifies with `key` and was made by
 * its primary key or one of its bound subkeys. `verify` itself failing (rather than a
 * signature in it) is the machinery, not the answer, and propagates as such.
 */
async function provesAnswer(message: CleartextMessage, key: Key, log: Logger): Promise<void> {
  const result = await verify({ message, verificationKeys: key, expectSigned: false });
  const ours = result.signatures.filter((s) => key.getKeys(s.keyID).length > 0);
  if (ours.length === 0) throw new WrongAnswer(`the message is not signed by key ${key.getFingerprint().toUpperCase()}`);
  let reason = '';
  for (const signature of ours) {
    try {
      await signature.verified;
      return;
    } catch (err) {
      reason = err instanceof Error ? err.message : String(err);
      log.debug({ keyID: signature.keyID.toHex(), reason }, 'pgp signature did not verify');
    }
  }
  throw new WrongAnswer(`the signature does not verify (${reason})`);
}
