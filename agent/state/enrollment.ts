import { readFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { writeFileAtomic } from './atomic.js';
import { makeDir, PASS_THROUGH_DIR_MODE } from './dirs.js';
import type { StateLayout } from './layout.js';

/** What a successful registration left in the state directory. */
export interface Enrollment {
  node_id: string;
  agent_id: string | null;
  token: string;
}

/** The stored enrollment, or null before the first accepted registration. */
export async function readEnrollment(layout: StateLayout): Promise<Enrollment | null> {
  let meta: { node_id?: unknown; agent_id?: unknown };
  let token: string;
  try {
    meta = JSON.parse(await readFile(layout.enrollment, 'utf8'));
    token = (await readFile(layout.token, 'utf8')).trim();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
  if (typeof meta.node_id !== 'string' || token === '') return null;
  return { node_id: meta.node_id, agent_id: typeof meta.agent_id === 'string' ? meta.agent_id : null, token };
}

/** Stores token and node id, both 0600 (the token is the node's credential), in a directory others may only pass through (`PASS_THROUGH_DIR_MODE`). */
export async function writeEnrollment(layout: StateLayout, enrollment: Enrollment): Promise<void> {
  await makeDir(dirname(layout.token), PASS_THROUGH_DIR_MODE);
  await writeFileAtomic(layout.token, `${enrollment.token}\n`, 0o600);
  await writeFileAtomic(layout.enrollment, `${JSON.stringify({ node_id: enrollment.node_id, agent_id: enrollment.agent_id })}\n`, 0o600);
}
