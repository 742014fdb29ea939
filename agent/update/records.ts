import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { updateDir } from './marker.js';

/**
 * Small JSON files in `<stateDir>/update/` that carry an update across
 * processes: the installer runs in its own unit, and the agent that reads its
 * outcome may be the new version or the restored old one.
 *
 * - `result.json`: the installer's outcome, reported and removed by the next agent start.
 * - `last-failure.json`: a version that failed (hash mismatch, unpack, health gate); the
 *   periodic check does not retry it, only a new `agent_update_available` offer does.
 * - `installing.json`: an installer is running for this version (since `at`).
 */
export interface InstallResult {
  version: string;
  previous: string | null;
  status: 'installed' | 'restored' | 'failed';
  detail: string | null;
  at: string;
}

export interface Failure {
  version: string;
  reason: string;
  at: string;
}

export interface Installing {
  version: string;
  at: string;
}

const file = (stateDir: string, name: string) => join(updateDir(stateDir), name);

async function writeJson(path: string, value: unknown): Promise<void> {
  await mkdir(join(path, '..'), { recursive: true });
  await writeFile(`${path}.tmp`, `${JSON.stringify(value)}\n`);
  await rename(`${path}.tmp`, path);
}

async function readJson<T>(path: string): Promise<T | null> {
  try {
    return JSON.parse(await readFile(path, 'utf8')) as T;
  } catch {
    return null;
  }
}

export const records = {
  result: {
    read: (stateDir: string) => readJson<InstallResult>(file(stateDir, 'result.json')),
    write: (stateDir: string, r: InstallResult) => writeJson(file(stateDir, 'result.json'), r),
    clear: (stateDir: string) => rm(file(stateDir, 'result.json'), { force: true }),
  },
  failure: {
    read: (stateDir: string) => readJson<Failure>(file(stateDir, 'last-failure.json')),
    write: (stateDir: string, f: Failure) => writeJson(file(stateDir, 'last-failure.json'), f),
    clear: (stateDir: string) => rm(file(stateDir, 'last-failure.json'), { force: true }),
  },
  installing: {
    read: (stateDir: string) => readJson<Installing>(file(stateDir, 'installing.json')),
    write: (stateDir: string, i: Installing) => writeJson(file(stateDir, 'installing.json'), i),
    clear: (stateDir: string) => rm(file(stateDir, 'installing.json'), { force: true }),
  },
};
