import { fileURLToPath } from 'node:url';
import type pg from 'pg';
import type { MigrationSet } from '../../infra/db/migrate.js';
import { failureBackoffMs, sleep, wakeableSleep } from '../../infra/timing.js';
import { withTransaction } from '../../infra/db/pool.js';
import { START, comparePositions, formatPosition, type EventStore, type GlobalPosition, type RecordedEvent } from '../../infra/eventstore/types.js';
import type { Logger } from '../../infra/logger.js';
import { applyEvents, type Projection } from './projection.js';

export const checkpointMigrations: MigrationSet = {
  name: 'projection-runtime',
  dir: fileURLToPath(new URL('./migrations', import.meta.url)),
};

export interface ProjectionStatus {
  name: string;
  mode: 'inline' | 'async';
  /** Where the projection stands; inline projections are always at the head. */
  checkpoint: string;
  head: string;
  lag_events: number | null;
  events_applied: number;
  updated_at: string | null;
  rebuilt_at: string | null;
  /** The latest failure of a batch while it lasts (async projections). */
  last_error: string | null;
  last_error_at: string | null;
}

export interface RebuildProgress {
  projection: string;
  events: number;
  position: GlobalPosition;
}

const BATCH = 1000;

/** The checkpoint table's set, then each projection's own, in order (known before any runtime exists). */
export function projectionMigrationSets(projections: readonly Projection[]): MigrationSet[] {
  return [checkpointMigrations, ...projections.flatMap((p) => (p.migrations ? [p.migrations] : []))];
}

/**
 * Runs the projections of one process: inline ones inside every append, async ones
 * in a loop per projection. Several processes may run the same runtime against
 * one database: a batch holds its checkpoint row `FOR UPDATE SKIP LOCKED`, so one
 * instance at a time advances each async projection and no event is applied twice.
 */
export class ProjectionRuntime {
  private readonly loops: Promise<void>[] = [];
  private stopping = false;
  private readonly wakers = new Set<() => void>();
  private readonly pauses = new Set<() => void>();
  private unwatch: (() => void) | undefined;

  constructor(
    private readonly store: EventStore,
    private readonly pool: pg.Pool,
    readonly projections: readonly Projection[],
    private readonly log: Logger,
    private readonly pollIntervalMs = 1000,
  ) {
    const names = new Set<string>();
    for (const p of projections) {
      if (names.has(p.name)) throw new Error(`projection ${p.name} registered twice`);
      names.add(p.name);
    }
  }

  /** Where a projection effectively runs on this store. */
  modeOf(projection: Projection): 'inline' | 'async' {
    return projection.mode === 'inline' && this.store.transactional ? 'inline' : 'async';
  }

  migrationSets(): MigrationSet[] {
    return projectionMigrationSets(this.projections);
  }

  /**
   * Hooks inline projections into appends and creates missing checkpoint rows. Call
   * once per process. The first attach of an inline projection (or the first since it
   * ran async) records the settled head as where its continuous application began
   * (`live_*`): the hook is in place before that head is read, so every event after
   * it is applied in its append's transaction; events before it are not provably
   * applied and count as lag until a rebuild.
   */
  async attach(): Promise<void> {
    const inline = this.projections.filter((p) => this.modeOf(p) === 'inline');
    if (inline.length > 0) {
      this.store.onAppend(
        async (tx, events) => {
          for (const projection of inline) {
            await applyEvents(projection, tx, events);
          }
        },
        inline.flatMap((p) => p.handles),
      );
    }
    const live = inline.length > 0 ? await this.store.settledHead() : START;
    for (const p of this.projections) {
      const mode = this.modeOf(p);
      await this.pool.query(
        `INSERT INTO projection_checkpoints (name, mode, live_tx_id, live_position) VALUES ($1, $2, $3, $4)
         ON CONFLICT (name) DO UPDATE SET
           live_tx_id = CASE WHEN EXCLUDED.mode <> 'inline' THEN NULL
                             WHEN projection_checkpoints.mode = 'inline' AND projection_checkpoints.live_tx_id IS NOT NULL THEN projection_checkpoints.live_tx_id
                             ELSE EXCLUDED.live_tx_id END,
           live_position = CASE WHEN EXCLUDED.mode <> 'inline' THEN NULL
                             WHEN projection_checkpoints.mode = 'inline' AND projection_checkpoints.live_tx_id IS NOT NULL THEN projection_checkpoints.live_position
                             ELSE EXCLUDED.live_position END,
           mode = EXCLUDED.mode`,
        [p.name, mode, mode === 'inline' ? live.tx.toString() : null, mode === 'inline' ? live.pos.toString() : null],
      );
    }
  }

  /** Starts the async loops (the projection runner role of this process). */
  start(): void {
    this.unwatch = this.store.watch(() => this.wakeAll());
    for (const p of this.projections) {
      if (this.modeOf(p) === 'async') this.loops.push(this.run(p));
    }
  }

  async stop(): Promise<void> {
    this.stopping = true;
    this.unwatch?.();
    this.wakeAll();
    for (const wake of [...this.pauses]) wake();
    await Promise.all(this.loops);
  }

  private wakeAll(): void {
    for (const wake of [...this.wakers]) wake();
  }

  /** Waits for new events (`wakeAll`), a stop, or `ms`. */
  private idle(ms: number): Promise<void> {
    return this.waitIn(this.wakers, ms);
  }

  /** A backoff that `stop()` cuts short (new events do not). */
  private pause(ms: number): Promise<void> {
    return this.waitIn(this.pauses, ms);
  }

  /** Waits `ms`, or until a callback in `wakers` (or `stop()`, which calls them all) ends it. */
  private async waitIn(wakers: Set<() => void>, ms: number): Promise<void> {
    // Race: a stop() that came during a batch has already woken the waiting loops;
    // this loop would otherwise sleep a whole interval before it sees it.
    if (this.stopping) return;
    const wait = wakeableSleep(ms);
    wakers.add(wait.wake);
    await wait.done;
    wakers.delete(wait.wake);
  }

  private async run(projection: Projection): Promise<void> {
    let failures = 0;
    while (!this.stopping) {
      try {
        const applied = await this.step(projection);
        if (failures > 0) await this.recordFailure(projection, null);
        failures = 0;
        if (applied < BATCH) await this.idle(this.pollIntervalMs);
      } catch (err) {
        failures += 1;
        this.log.error({ err, projection: projection.name, failures }, 'projection batch failed; retrying');
        await this.recordFailure(projection, err);
        await this.pause(failureBackoffMs(failures));
      }
    }
  }

  /** Keeps the latest failure (or its end) on the checkpoint row for `status`. */
  private async recordFailure(projection: Projection, err: unknown): Promise<void> {
    const message = err === null ? null : err instanceof Error ? err.message : String(err);
    await this.pool
      .query(
        message === null
          ? 'UPDATE projection_checkpoints SET last_error = NULL, last_error_at = NULL WHERE name = $1'
          : 'UPDATE projection_checkpoints SET last_error = $2, last_error_at = now() WHERE name = $1',
        message === null ? [projection.name] : [projection.name, message.slice(0, 2000)],
      )
      .catch((e) => this.log.warn({ err: e, projection: projection.name }, 'could not record the projection failure'));
  }

  /**
   * One batch of an async projection in one transaction: lock the checkpoint (or
   * skip when another instance holds it), apply the events, move the checkpoint.
   * Returns how many events were read.
   */
  async step(projection: Projection, batchSize = BATCH): Promise<number> {
    return withTransaction(this.pool, async (tx) => {
      const locked = await tx.query('SELECT tx_id, position, events FROM projection_checkpoints WHERE name = $1 FOR UPDATE SKIP LOCKED', [projection.name]);
      if (locked.rowCount === 0) return 0;
      const from: GlobalPosition = { tx: BigInt(locked.rows[0].tx_id), pos: BigInt(locked.rows[0].position) };
      const batch = await this.store.readAll(from, batchSize);
      if (batch.length === 0) return 0;
      await applyEvents(projection, tx, batch);
      const last = batch[batch.length - 1].position;
      await tx.query('UPDATE projection_checkpoints SET tx_id = $2, position = $3, events = events + $4, updated_at = now() WHERE name = $1', [
        projection.name,
        last.tx.toString(),
        last.pos.toString(),
        batch.length,
      ]);
      return batch.length;
    });
  }

  /** Runs async projections until they reach the head as it was when called (tests, CLI, commands on KurrentDB). */
  async catchUp(names?: readonly string[]): Promise<void> {
    // Race: `headPosition` stops below event writers still running, so events
    // committed just before this call behind such a writer would be missed;
    // `settledHead` waits for the writers running at the call to finish.
    const head = await this.store.settledHead();
    for (const p of this.select(names)) {
      if (this.modeOf(p) !== 'async') continue;
      while (comparePositions(await this.checkpointOf(p.name), head) < 0) {
        if ((await this.step(p)) === 0) await sleep(20);
      }
    }
  }

  private async checkpointOf(name: string): Promise<GlobalPosition> {
    const r = await this.pool.query('SELECT tx_id, position FROM projection_checkpoints WHERE name = $1', [name]);
    return r.rows[0] ? { tx: BigInt(r.rows[0].tx_id), pos: BigInt(r.rows[0].position) } : START;
  }

  private select(names?: readonly string[]): Projection[] {
    if (!names || names.length === 0) return [...this.projections];
    return names.map((name) => {
      const found = this.projections.find((p) => p.name === name);
      if (!found) throw new Error(`unknown projection ${name} (known: ${this.projections.map((p) => p.name).join(', ')})`);
      return found;
    });
  }

  /**
   * Empties a projection's tables and replays every event from position 0, in one
   * transaction: readers see the old tables until the new ones are complete.
   *
   * Inline projection: its tables are locked (EXCLUSIVE: reads go on, writes wait)
   * before the snapshot is taken, so an append either committed before the lock
   * (its events are in the snapshot) or writes its inline rows after the rebuild.
   * Async projection: its checkpoint row is locked, so no runner batch interleaves;
   * it replays up to the settled head and leaves the rest to the runner.
   */
  async rebuild(names?: readonly string[], onProgress?: (p: RebuildProgress) => void): Promise<RebuildProgress[]> {
    const results: RebuildProgress[] = [];
    for (const projection of this.select(names)) {
      const inline = this.modeOf(projection) === 'inline';
      const readInTx = this.store.readAllInTransaction?.bind(this.store);
      const result = await retrySerialization(() =>
        withTransaction(
          this.pool,
          async (tx) => {
            if (inline && projection.tables.length > 0) await tx.query(`LOCK TABLE ${projection.tables.join(', ')} IN EXCLUSIVE MODE`);
            await tx.query('SELECT 1 FROM projection_checkpoints WHERE name = $1 FOR UPDATE', [projection.name]);
            for (const table of projection.tables) await tx.query(`DELETE FROM ${table}`);
            let position = START;
            let events = 0;
            // An async rebuild replays up to the head as it stands now and leaves the
            // rest to the runner: chasing appends that keep coming would never end.
            const target = inline && readInTx ? undefined : await this.store.settledHead();
            for (;;) {
              if (target && comparePositions(position, target) >= 0) break;
              const batch: RecordedEvent[] = inline && readInTx ? await readInTx(tx, position, BATCH) : await this.store.readAll(position, BATCH);
              if (batch.length === 0) break;
              await applyEvents(projection, tx, batch);
              position = batch[batch.length - 1].position;
              events += batch.length;
              onProgress?.({ projection: projection.name, events, position });
            }
            await tx.query(`UPDATE projection_checkpoints SET tx_id = $2, position = $3, events = $4, updated_at = now(), rebuilt_at = now() WHERE name = $1`, [
              projection.name,
              position.tx.toString(),
              position.pos.toString(),
              events,
            ]);
            return { projection: projection.name, events, position };
          },
          // Inline: one snapshot, taken after the table locks. Async: events are read
          // on other connections, so READ COMMITTED; a REPEATABLE READ snapshot taken
          // before waiting for the checkpoint row failed (40001) whenever a runner
          // batch committed meanwhile, and a busy runner exhausted the retries.
          inline ? 'REPEATABLE READ' : 'READ COMMITTED',
        ),
      );
      this.log.info({ projection: projection.name, events: result.events, position: formatPosition(result.position) }, 'projection rebuilt');
      results.push(result);
    }
    return results;
  }

  async status(): Promise<ProjectionStatus[]> {
    const head = await this.store.headPosition();
    const rows = await this.pool.query(
      'SELECT name, tx_id, position, events, updated_at, rebuilt_at, last_error, last_error_at, live_tx_id, live_position FROM projection_checkpoints',
    );
    const byName = new Map(rows.rows.map((r) => [r.name as string, r]));
    const out: ProjectionStatus[] = [];
    for (const p of this.projections) {
      const row = byName.get(p.name);
      const mode = this.modeOf(p);
      const stored: GlobalPosition = row ? { tx: BigInt(row.tx_id), pos: BigInt(row.position) } : START;
      const { checkpoint, lag } =
        mode === 'inline' ? await this.inlineLag(p, stored, row, head) : { checkpoint: stored, lag: await this.store.countAfter(stored) };
      out.push({
        name: p.name,
        mode,
        checkpoint: formatPosition(checkpoint),
        head: formatPosition(head),
        lag_events: lag,
        events_applied: row ? Number(row.events) : 0,
        updated_at: row?.updated_at ? new Date(row.updated_at).toISOString() : null,
        rebuilt_at: row?.rebuilt_at ? new Date(row.rebuilt_at).toISOString() : null,
        last_error: row?.last_error ?? null,
        last_error_at: row?.last_error_at ? new Date(row.last_error_at).toISOString() : null,
      });
    }
    return out;
  }

  /**
   * An inline projection's lag: the events of the types it handles that are not
   * provably applied. Everything up to its checkpoint (its last rebuild) is; from
   * `live_*` on, every append applied it in its own transaction. What lies between
   * (history from before the projection was attached in this mode) is the lag, and
   * only when there is none does the projection stand at the head.
   */
  private async inlineLag(
    projection: Projection,
    stored: GlobalPosition,
    row: Record<string, any> | undefined,
    head: GlobalPosition,
  ): Promise<{ checkpoint: GlobalPosition; lag: number | null }> {
    // Never attached in this mode: nothing after the checkpoint is provably applied.
    const live: GlobalPosition | undefined = row?.live_tx_id != null ? { tx: BigInt(row.live_tx_id), pos: BigInt(row.live_position) } : undefined;
    if (live && comparePositions(stored, live) >= 0) return { checkpoint: head, lag: 0 };
    const lag = await this.store.countAfter(stored, { types: projection.handles, ...(live ? { upTo: live } : {}) });
    return { checkpoint: lag === 0 ? head : stored, lag };
  }
}

/**
 * A rebuild's snapshot is taken before it waits for the checkpoint row; if a
 * runner batch commits meanwhile, PostgreSQL aborts the rebuild (40001) and it
 * starts again with a fresh snapshot. Race: an inline rebuild locks its tables
 * children first while a live append writes the parent row first, so the two can
 * deadlock; PostgreSQL then aborts the rebuild (40P01), which is retried the same way.
 */
async function retrySerialization<T>(work: () => Promise<T>, attempts = 5): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await work();
    } catch (err) {
      const code = (err as { code?: string }).code;
      if ((code !== '40001' && code !== '40P01') || attempt >= attempts) throw err;
    }
  }
}
