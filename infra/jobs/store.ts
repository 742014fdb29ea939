import { fileURLToPath } from 'node:url';
import type pg from 'pg';
import { TooManyRequests } from '../../domain/errors.js';
import { JOB_LIMITS, type JobKind, type JobSpec, type JobStatus } from '../../domain/probes/jobs.js';
import { advisoryKey, withTransaction, type Queryable } from '../db/pool.js';

export const jobMigrations = { name: 'ui-jobs', dir: fileURLToPath(new URL('./migrations', import.meta.url)) };

/** Messages of a job are announced on this channel with the job id as payload; readers fetch the rows. */
export const JOBS_CHANNEL = 'dn42_ui_jobs';

const QUOTA_LOCK = advisoryKey('ui-jobs:quota');
const KEEP = `${JOB_LIMITS.keepAfterDoneMs} * interval '1 millisecond'`;

export interface Job {
  id: string;
  kind: JobKind;
  node_id: string;
  spec: JobSpec;
  status: JobStatus;
  deadline: Date;
  done_at: Date | null;
}

export interface JobMessage {
  seq: number;
  event: string;
  data: Record<string, unknown>;
}

/** What happened to an upstream message: stored, or refused because the job is no longer running. */
export type AppendResult = 'stored' | 'dropped' | 'closed';

/**
 * The job table, method by method. Every time comes from the caller (the
 * service clock), never from the database, so tests can move it.
 */
export const jobStore = {
  /**
   * Creates a waiting job when the quota allows (429 otherwise). The quota
   * counts waiting and running jobs whose deadline has not passed, on every
   * instance; one advisory lock serialises creations so two requests cannot
   * both take the last seat. Expired rows are swept here as well.
   */
  async create(pool: pg.Pool, job: { id: string; kind: JobKind; node_id: string; spec: JobSpec; run_ms: number }, now: Date): Promise<void> {
    await withTransaction(pool, async (tx) => {
      await tx.query('SELECT pg_advisory_xact_lock($1)', [QUOTA_LOCK]);
      await sweep(tx, now);
      const { rows } = await tx.query<{ total: number; node: number }>(
        `SELECT count(*)::int AS total, count(*) FILTER (WHERE node_id = $1)::int AS node
           FROM ui_jobs WHERE status <> 'done' AND deadline > $2`,
        [job.node_id, now],
      );
      if (rows[0].total >= JOB_LIMITS.global) throw new TooManyRequests(`too many running probe and log jobs (at most ${JOB_LIMITS.global})`);
      if (rows[0].node >= JOB_LIMITS.perNode)
        throw new TooManyRequests(`too many running probe and log jobs on node ${job.node_id} (at most ${JOB_LIMITS.perNode})`);
      await tx.query(
        `INSERT INTO ui_jobs (id, kind, node_id, spec, status, run_ms, created_at, deadline)
         VALUES ($1, $2, $3, $4, 'waiting', $5, $6, $6::timestamptz + $7 * interval '1 millisecond')`,
        [job.id, job.kind, job.node_id, JSON.stringify(job.spec), job.run_ms, now, JOB_LIMITS.connectTimeoutMs],
      );
    });
  },

  async find(db: Queryable, id: string): Promise<Job | undefined> {
    const { rows } = await db.query(`SELECT id, kind, node_id, spec, status, deadline, done_at FROM ui_jobs WHERE id = $1`, [id]);
    return rows[0] as Job | undefined;
  },

  /**
   * The agent's job stream takes a waiting job of its node: it becomes running
   * and gets its run deadline. Undefined when the job is unknown, of another
   * kind or node, timed out, or already taken (one stream per job).
   */
  async attach(db: Queryable, id: string, kind: JobKind, nodeId: string, now: Date): Promise<Job | undefined> {
    const { rows } = await db.query(
      `UPDATE ui_jobs SET status = 'running', attached_at = $4, deadline = $4::timestamptz + run_ms * interval '1 millisecond'
        WHERE id = $1 AND kind = $2 AND node_id = $3 AND status = 'waiting' AND deadline > $4
        RETURNING id, kind, node_id, spec, status, deadline, done_at`,
      [id, kind, nodeId, now],
    );
    return rows[0] as Job | undefined;
  },

  /**
   * Buffers one message of a running job and announces it, in one statement
   * (the NOTIFY goes out when it commits, after the row is readable). The row
   * lock on the job orders concurrent appends; `done` finishes the job.
   */
  async append(db: Queryable, id: string, event: string, data: Record<string, unknown>, now: Date): Promise<AppendResult> {
    const done = event === 'done';
    const { rows } = await db.query<{ seq: number }>(
      `WITH bumped AS (
         UPDATE ui_jobs SET last_seq = last_seq + 1,
                status = CASE WHEN $5 THEN 'done' ELSE status END,
                done_at = CASE WHEN $5 THEN $4::timestamptz ELSE done_at END
          WHERE id = $1 AND status = 'running' AND deadline > $4 AND (last_seq < $6 OR $5)
          RETURNING id, last_seq
       ), stored AS (
         INSERT INTO ui_job_messages (job_id, seq, event, data) SELECT id, last_seq, $2, $3 FROM bumped RETURNING seq
       )
       SELECT seq, pg_notify('${JOBS_CHANNEL}', $1) FROM stored`,
      [id, event, JSON.stringify(data), now, done, JOB_LIMITS.maxMessages],
    );
    if (rows.length > 0) return 'stored';
    const { rows: open } = await db.query(`SELECT 1 FROM ui_jobs WHERE id = $1 AND status = 'running' AND deadline > $2`, [id, now]);
    return open.length > 0 ? 'dropped' : 'closed';
  },

  /** Buffered messages after `afterSeq`, in order. */
  async messagesAfter(db: Queryable, id: string, afterSeq: number, limit = 500): Promise<JobMessage[]> {
    const { rows } = await db.query(`SELECT seq, event, data FROM ui_job_messages WHERE job_id = $1 AND seq > $2 ORDER BY seq LIMIT $3`, [id, afterSeq, limit]);
    return rows as JobMessage[];
  },

  /** Open jobs of a node (for tests and diagnostics). */
  async openCount(db: Queryable, nodeId: string, now: Date): Promise<number> {
    const { rows } = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ui_jobs WHERE node_id = $1 AND status <> 'done' AND deadline > $2`, [
      nodeId,
      now,
    ]);
    return rows[0].n;
  },
};

/** Deletes jobs nobody can stream any more: finished longer ago than they are kept, or timed out as long ago. */
async function sweep(db: Queryable, now: Date): Promise<void> {
  await db.query(
    `DELETE FROM ui_jobs
      WHERE (status = 'done' AND done_at + ${KEEP} <= $1)
         OR (status <> 'done' AND deadline + ${KEEP} <= $1)`,
    [now],
  );
}
