import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { sha256Hex } from '../../domain/sha256.js';
import { REQUEST_TIMEOUT_MS } from '../http.js';
import type { AgentRuntime } from '../runtime.js';
import type { Manifest } from './manifest.js';

/** A downloaded file whose bytes do not hash to the manifest's sha256 (or have another size). */
export class ReleaseFileMismatch extends Error {}

/**
 * Downloads every file of the release (`GET /agent/update/wheels/{v}/{name}`,
 * agent Bearer) into `dir` and checks each, byte for byte, against the
 * manifest's sha256 and size before writing it. On any mismatch or failure
 * the whole directory is removed: nothing half-verified is left for an
 * installer to pick up.
 */
export async function downloadRelease(rt: AgentRuntime, manifest: Manifest, dir: string): Promise<void> {
  await rm(dir, { recursive: true, force: true });
  await mkdir(dir, { recursive: true });
  try {
    for (const file of manifest.wheels) await writeFile(join(dir, file.filename), await fetchVerified(rt, manifest.version, file));
  } catch (err) {
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
}

async function fetchVerified(rt: AgentRuntime, version: string, file: Manifest['wheels'][number]): Promise<Buffer> {
  const url = `${rt.controllerUrl}/agent/update/wheels/${version}/${file.filename}`;
  const res = await fetch(url, { headers: { authorization: `Bearer ${rt.agentToken()}` }, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS * 4) });
  if (res.status !== 200) throw new Error(`download ${version}/${file.filename}: HTTP ${res.status}`);
  const bytes = Buffer.from(await res.arrayBuffer());
  const digest = sha256Hex(bytes);
  if (digest !== file.sha256 || bytes.length !== file.size) {
    throw new ReleaseFileMismatch(
      `sha256 mismatch for ${version}/${file.filename}: manifest ${file.sha256} (${file.size} bytes), downloaded ${digest} (${bytes.length} bytes)`,
    );
  }
  return bytes;
}
