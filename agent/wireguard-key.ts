import { readFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { escrowPrivateKey } from './escrow.js';
import { detailOf } from './http.js';
import { generateWireguardPrivateKey, wireguardPublicKey } from './render/keys.js';
import type { AgentRuntime } from './runtime.js';
import { writeFileAtomic } from './state/atomic.js';
import { makeDir, PASS_THROUGH_DIR_MODE } from './state/dirs.js';

/**
 * The node's WireGuard private key from the state directory, generated on the
 * first call and stored 0600. A node keeps one key pair for life: the server
 * refuses another public key once one is registered.
 */
export async function nodeWireguardKey(path: string): Promise<string> {
  try {
    const stored = (await readFile(path, 'utf8')).trim();
    wireguardPublicKey(stored); // throws on a damaged file rather than rendering it
    return stored;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  await makeDir(dirname(path), PASS_THROUGH_DIR_MODE);
  const key = generateWireguardPrivateKey();
  await writeFileAtomic(path, `${key}\n`, 0o600);
  return key;
}

export type KeyRegistration = 'stored' | 'matched' | 'rejected';

/**
 * `POST /agent/wireguard-keys` with the public key, and the private key escrowed
 * to the recovery key when `/agent/recovery-public-key` says one is configured.
 * `rejected` (409) means the server holds another key for this node: an operator
 * has to act, the agent goes on with its own key and logs the error.
 */
export async function registerWireguardKey(rt: AgentRuntime, privateKey: string): Promise<KeyRegistration> {
  const recovery = await rt.request<{ configured?: boolean; public_key_pem?: string }>('GET', '/agent/recovery-public-key');
  if (recovery.status !== 200) throw new Error(`recovery public key: ${detailOf(recovery)}`);
  const escrow = recovery.body.configured && recovery.body.public_key_pem ? await escrowPrivateKey(privateKey, recovery.body.public_key_pem) : null;
  if (recovery.body.configured && escrow === null) rt.logger.warn('recovery key cannot encrypt (not RSA, EC or X25519): no escrow');
  const body = { node_id: rt.nodeId, public_key: wireguardPublicKey(privateKey), ...(escrow ? { private_key_escrow: escrow } : {}) };
  const answer = await rt.request<{ status?: KeyRegistration; detail?: string }>('POST', '/agent/wireguard-keys', body);
  if (answer.status === 409) {
    rt.logger.error({ public_key: body.public_key }, `wireguard key rejected by the control server: ${answer.body.detail ?? 'mismatch'}`);
    return 'rejected';
  }
  if (answer.status !== 200 || !answer.body.status) throw new Error(`wireguard key registration: ${detailOf(answer)}`);
  return answer.body.status;
}
