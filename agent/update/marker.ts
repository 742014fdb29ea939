import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * The health gate's evidence: the version of an agent process whose report the
 * control server accepted. Written by the agent (after its first accepted
 * runtime snapshot), read by the installer, which waits for the target version
 * with a time after the install began.
 */
export interface ReportedVersion {
  version: string;
  pid: number;
  at: string;
}

export const updateDir = (stateDir: string): string => join(stateDir, 'update');
const markerPath = (stateDir: string) => join(updateDir(stateDir), 'reported-version.json');

/** Records that this process (`version`) got a report accepted; atomic (write, then rename). */
export async function writeReportedVersion(stateDir: string, version: string, now = new Date()): Promise<void> {
  const marker: ReportedVersion = { version, pid: process.pid, at: now.toISOString() };
  await mkdir(updateDir(stateDir), { recursive: true });
  const tmp = `${markerPath(stateDir)}.${process.pid}.tmp`;
  await writeFile(tmp, `${JSON.stringify(marker)}\n`);
  await rename(tmp, markerPath(stateDir));
}

export async function readReportedVersion(stateDir: string): Promise<ReportedVersion | null> {
  try {
    return JSON.parse(await readFile(markerPath(stateDir), 'utf8')) as ReportedVersion;
  } catch {
    return null;
  }
}
