import { readFile } from 'node:fs/promises';
import type { Logger } from 'pino';
import { isRoaSet, type RoaSet } from '../../domain/rpki/roa.js';
import { detailOf } from '../http.js';
import type { AgentRuntime } from '../runtime.js';
import { writeFileAtomic } from '../state/atomic.js';

/**
 * The ROA set the agent holds: the last one the control server sent, with its
 * entity tag, kept in the node's state dir (`roas.json`) so a restart renders
 * the same ROA tables without asking. It is replaced only by a new set the
 * server answered 200 with: a 304 keeps it, and so does every failure (no
 * replica, replica down, server unreachable), because an emptied ROA table
 * would let every invalid route in.
 */
export interface HeldRoas {
  etag: string;
  set: RoaSet;
}

/** The held set; null when there is none, or the file is not a valid one (logged: the next fetch replaces it). */
export async function readHeldRoas(path: string, log?: Logger): Promise<HeldRoas | null> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch {
    return null;
  }
  try {
    const held = JSON.parse(text) as Partial<HeldRoas>;
    if (typeof held.etag === 'string' && isRoaSet(held.set)) return { etag: held.etag, set: held.set };
  } catch {
    // fall through: not JSON
  }
  log?.warn({ path }, 'held ROA set unreadable; fetching it again');
  return null;
}

/**
 * `GET /agent/roas` with the held tag in `If-None-Match`; a new set is checked
 * (the shared schema, canonical prefixes) and kept. Answers the set to render
 * and whether it changed. Never throws.
 */
export async function refreshRoas(rt: AgentRuntime, path: string): Promise<{ held: HeldRoas | null; changed: boolean }> {
  const held = await readHeldRoas(path, rt.logger);
  try {
    const answer = await rt.request<unknown>('GET', '/agent/roas', undefined, held ? { 'if-none-match': held.etag } : {});
    if (answer.status === 304 && held) return { held, changed: false };
    if (answer.status === 200 && answer.etag && isRoaSet(answer.body)) {
      const fresh = { etag: answer.etag, set: answer.body };
      if (held?.etag === fresh.etag) return { held, changed: false };
      await writeFileAtomic(path, `${JSON.stringify(fresh)}\n`);
      rt.logger.info({ commit: fresh.set.commit, roas: fresh.set.roas.length }, 'new ROA set');
      return { held: fresh, changed: true };
    }
    const level = answer.status === 404 ? 'debug' : 'warn';
    rt.logger[level]({ status: answer.status }, `ROA set not updated: ${detailOf(answer)}${held ? '; keeping the held one' : ''}`);
  } catch (err) {
    rt.logger.warn({ err }, 'ROA set not updated: control server unreachable');
  }
  return { held, changed: false };
}
