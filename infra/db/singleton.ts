import type pg from 'pg';
import type { Logger } from '../logger.js';
import { advisoryKey } from './pool.js';

/**
 * Runs `work` only if no other instance is running the job of the same name right
 * now (a session advisory lock held on one connection for the duration). Returns
 * whether it ran.
 */
export async function runExclusive(pool: pg.Pool, name: string, work: () => Promise<void>): Promise<boolean> {
  const client = await pool.connect();
  const key = advisoryKey(`job:${name}`);
  // Race: the session holding the lock can die while `work` runs (server restart,
  // pg_terminate_backend, network). A checked-out pg client then emits 'error'
  // with nobody listening, which crashed the process. The lock dies with the
  // session (another instance may take the job); the unlock below fails, so the
  // caller sees an error, and the broken client is destroyed, not pooled again.
  let lost: Error | undefined;
  const onLost = (err: Error) => {
    lost = err;
  };
  client.on('error', onLost);
  try {
    const { rows } = await client.query<{ locked: boolean }>('SELECT pg_try_advisory_lock($1) AS locked', [key]);
    if (!rows[0].locked) return false;
    try {
      await work();
      return true;
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [key]);
    }
  } finally {
    client.off('error', onLost);
    client.release(lost);
  }
}

export interface SingletonJob {
  stop(): Promise<void>;
}

/**
 * A periodic job that one instance runs at a time (retention, alert evaluation,
 * registry sync). Each tick tries the lock; the instance that gets it runs the
 * work, the others skip that tick.
 */
export function scheduleSingleton(pool: pg.Pool, name: string, intervalMs: number, work: () => Promise<void>, log: Logger): SingletonJob {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<unknown> = Promise.resolve();
  const tick = () => {
    if (stopped) return;
    running = runExclusive(pool, name, work)
      .catch((err) => log.error({ err, job: name }, 'singleton job failed'))
      .finally(() => {
        if (!stopped) timer = setTimeout(tick, intervalMs);
      });
  };
  timer = setTimeout(tick, 0);
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}
