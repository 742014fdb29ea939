import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { DesiredState } from '../../domain/desired-state/schema.js';
import { decodeWireguardKey } from './keys.js';
import { RenderError } from './types.js';

/**
 * How a `preshared_key_ref` resolves. The desired state never carries secrets,
 * only names: a ref names the file `<state-dir>/wireguard-psk/<ref>` on the
 * node, holding the key as `wg genpsk` prints it (the operator or a secrets tool
 * puts it there, mode 0600). The agent reads the files before rendering and
 * passes them in `RenderInputs.presharedKeys`, so the renderer stays pure. A ref
 * without a key fails the render: a tunnel without its PSK never comes up, and a
 * loud failure keeps the previous files in force.
 */

/** Refs may name a file inside the PSK folder and nothing else. */
const SAFE_REF = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$/;

/** The refs the document uses, sorted, each once. */
export function presharedKeyRefs(state: DesiredState): string[] {
  const refs = state.interfaces.map((i) => i.peer.preshared_key_ref).filter((r): r is string => r !== null);
  return [...new Set(refs)].sort();
}

/** Where the key of `ref` lives; throws `RenderError` for a ref that is no plain file name. */
export function presharedKeyPath(stateDir: string, ref: string): string {
  if (!SAFE_REF.test(ref)) throw new RenderError(`invalid preshared_key_ref '${ref}': expected a file name of letters, digits, '.', '_', '-'`);
  return join(stateDir, 'wireguard-psk', ref);
}

/** Reads the keys of every ref of `state`; a missing file is left out (the render then names the ref). */
export async function readPresharedKeys(stateDir: string, state: DesiredState): Promise<Record<string, string>> {
  const keys: Record<string, string> = {};
  for (const ref of presharedKeyRefs(state)) {
    try {
      keys[ref] = (await readFile(presharedKeyPath(stateDir, ref), 'utf8')).trim();
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
  }
  return keys;
}

/** The key for `ref`, checked; throws `RenderError` when absent or malformed. */
export function presharedKeyFor(ref: string, keys: Readonly<Record<string, string>>, iface: string): string {
  const key = Object.hasOwn(keys, ref) ? keys[ref] : undefined;
  if (key === undefined) throw new RenderError(`no preshared key for preshared_key_ref '${ref}' (interface ${iface})`);
  try {
    decodeWireguardKey(key);
  } catch {
    throw new RenderError(`invalid preshared key for preshared_key_ref '${ref}' (interface ${iface})`);
  }
  return key;
}
