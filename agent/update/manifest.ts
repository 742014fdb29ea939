import { isReleaseFileName, isVersion } from '../../domain/release/rules.js';
import type { AgentRuntime } from '../runtime.js';

/** The target release as `GET /agent/update/manifest` answers it. */
export interface Manifest {
  version: string;
  wheels: { filename: string; sha256: string; size: number }[];
}

/**
 * The manifest of the global target, or null (204: no target). A manifest
 * whose version or file names fail the server's own allow-lists, or whose
 * hashes are not sha256 hex, is refused: those values become paths and URLs.
 */
export async function fetchManifest(rt: AgentRuntime): Promise<Manifest | null> {
  const res = await rt.request<Manifest>('GET', '/agent/update/manifest');
  if (res.status === 204) return null;
  if (res.status !== 200) throw new Error(`update manifest: HTTP ${res.status}`);
  return checkManifest(res.body);
}

export function checkManifest(body: unknown): Manifest {
  const m = body as Partial<Manifest> | null;
  const files = Array.isArray(m?.wheels) ? m.wheels : null;
  if (!m || typeof m.version !== 'string' || !isVersion(m.version) || !files || files.length === 0) throw new Error('update manifest: not a manifest');
  for (const f of files) {
    const ok =
      typeof f?.filename === 'string' &&
      isReleaseFileName(f.filename) &&
      typeof f.sha256 === 'string' &&
      /^[0-9a-f]{64}$/.test(f.sha256) &&
      Number.isSafeInteger(f.size);
    if (!ok) throw new Error(`update manifest: invalid file entry ${JSON.stringify(f).slice(0, 200)}`);
  }
  return { version: m.version, wheels: files.map((f) => ({ filename: f.filename, sha256: f.sha256, size: f.size })) };
}
