// STUB — owned by the signature-verification helper, who replaces the bodies. Signatures are the agreed interface.
import type { Config } from '../config.js';
import type { Logger } from '../logger.js';

export type PgpVerdict =
  | { ok: true; fingerprint: string; keySource: 'registry' | 'keyserver' | 'request' }
  /** wrong answer (400), key found nowhere (422, detail asks for the key), verification machinery failed (503). */
  | { ok: false; status: 400 | 422 | 503; detail: string };

/**
 * The four checks of the contract for a clearsigned answer: imported key's fingerprint equals
 * `fingerprint` (the registered one), signature good, primary-key fingerprint of the valid
 * signature matches, signed plaintext equals `nonce`. Key lookup: registry key-cert → key server
 * (`PGP_KEYSERVER_URL`, exact fingerprint, unreachable skipped) → `publicKey` from the request.
 */
export async function verifyPgpAnswer(
  _deps: { config: Config; log: Logger },
  _input: { clearsigned: string; nonce: string; fingerprint: string; publicKey?: string },
): Promise<PgpVerdict> {
  throw new Error('verifyPgpAnswer: not implemented yet');
}
