import { randomUUID } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { PublicMap } from '../../domain/public/map.js';
import { isPublicMap } from '../../domain/public/network.js';

/**
 * The snapshot of `GET /control/v1/public/map` that the site bakes into its
 * page. The last good one is kept on disk (`DATA_DIR/site/map-snapshot.json`),
 * so a site started while the control server is down still shows the network.
 */
export const SNAPSHOT_TIMEOUT_MS = 5_000;

export const snapshotPath = (dataDir: string): string => join(dataDir, 'site', 'map-snapshot.json');

/** Asks the control server for the public map; throws on no answer, a status other than 200, or a body that is not a public map. */
export async function fetchSnapshot(controlUrl: string, timeoutMs = SNAPSHOT_TIMEOUT_MS): Promise<PublicMap> {
  const url = `${controlUrl.replace(/\/+$/, '')}/control/v1/public/map`;
  const res = await fetch(url, { signal: AbortSignal.timeout(timeoutMs), headers: { accept: 'application/json' } });
  if (res.status !== 200) throw new Error(`${url} answered ${res.status}`);
  const body: unknown = await res.json();
  if (!isPublicMap(body)) throw new Error(`${url} answered something that is not a public map`);
  return body;
}

/** The kept snapshot, or null when there is none (or it is unreadable: then the next good fetch replaces it). */
export async function readSavedSnapshot(dataDir: string): Promise<PublicMap | null> {
  try {
    const body: unknown = JSON.parse(await readFile(snapshotPath(dataDir), 'utf8'));
    return isPublicMap(body) ? body : null;
  } catch {
    return null;
  }
}

/** Keeps `map` as the last good snapshot (written aside, then renamed over the old one). */
export async function saveSnapshot(dataDir: string, map: PublicMap): Promise<void> {
  const path = snapshotPath(dataDir);
  await mkdir(dirname(path), { recursive: true });
  const temporary = `${path}.${process.pid}-${randomUUID()}.tmp`;
  await writeFile(temporary, JSON.stringify(map));
  await rename(temporary, path);
}
