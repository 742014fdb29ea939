import { join } from 'node:path';
import type pg from 'pg';
import { Conflict } from '../../domain/errors.js';
import { REGISTRY_SYNC_STREAM, type RegistrySynced } from '../../domain/registry/events.js';
import { buildSnapshot } from '../../domain/registry/snapshot.js';
import { dataDirOf, type Config } from '../config.js';
import { runExclusive } from '../db/singleton.js';
import type { EventMetadata, EventStore } from '../eventstore/types.js';
import type { Logger } from '../logger.js';
import { fetchHead, readObjects, remoteHead, snapshotDirectory, upstreamSource, UpstreamError, type GitOptions } from './git.js';
import { LOAD_FORMAT, markChecked, markRecorded, readState, replaceSnapshot, type RegistryState } from './store.js';

/** The contract's upper bound of one sync round. */
export const SYNC_TIMEOUT_MS = 300_000;

/** The name of the advisory-locked job: the periodic loop and `POST /sync` share it, across instances. */
export const SYNC_JOB = 'registry-sync';

export interface SyncResult {
  synced: boolean;
  commit: string;
  previous_commit: string | null;
  counts: Record<string, number>;
  duration_ms: number;
}

/** The upstream failed (unreachable, refused, no HEAD) or the round ran out of time; the replica keeps its data. */
export class SyncFailed extends Error {
  constructor(
    readonly detail: string,
    options?: { cause?: unknown },
  ) {
    super(detail, options);
    this.name = 'SyncFailed';
  }
}

export interface RegistrySyncDeps {
  config: Config;
  pool: pg.Pool;
  store: EventStore;
  log: Logger;
  now: () => Date;
}

export interface SyncOptions {
  force?: boolean;
  metadata?: Partial<EventMetadata>;
}

/**
 * One sync round: ask the upstream for its HEAD, stop there when the replica
 * already holds that commit (unless forced), else fetch it, parse every object
 * and replace the replica's tables in one transaction, then record the load as a
 * `RegistrySynced` event. Mutually exclusive across instances (advisory lock).
 */
export class RegistrySyncer {
  readonly cacheDir: string;

  constructor(
    private readonly deps: RegistrySyncDeps,
    private readonly options: { timeoutMs?: number; cacheDir?: string; beforeCommit?: () => Promise<void> } = {},
  ) {
    this.cacheDir = options.cacheDir ?? join(dataDirOf(deps.config), 'registry-cache.git');
  }

  get enabled(): boolean {
    return this.deps.config.registrySource !== undefined;
  }

  async sync(options: SyncOptions = {}): Promise<SyncResult> {
    const { config } = this.deps;
    if (config.registrySource === undefined) throw new Conflict('registry sync is disabled: REGISTRY_SOURCE is not configured');
    const source = upstreamSource(config.registrySource);
    if (source.needsToken && !config.registryUpstreamToken)
      throw new Conflict('the registry upstream needs a token: REGISTRY_UPSTREAM_TOKEN is not configured');
    let result: SyncResult | undefined;
    const ran = await runExclusive(this.deps.pool, SYNC_JOB, async () => {
      result = await this.round(source, options);
    });
    if (!ran) throw new Conflict('a registry sync is already running');
    return result!;
  }

  private async round(source: ReturnType<typeof upstreamSource>, options: SyncOptions): Promise<SyncResult> {
    const { pool, log, now, config } = this.deps;
    const timeoutMs = this.options.timeoutMs ?? SYNC_TIMEOUT_MS;
    const started = performance.now();
    const deadline = started + timeoutMs;
    const signal = AbortSignal.timeout(timeoutMs);
    const gitOptions: GitOptions = { signal, token: config.registryUpstreamToken, tokenUser: tokenUser(source.location) };
    const force = options.force ?? false;
    const phase = async <T>(name: string, work: () => Promise<T>): Promise<T> => {
      const t = performance.now();
      const value = await work();
      log.info({ phase: name, ms: Math.round(performance.now() - t) }, `registry sync: ${name}`);
      return value;
    };

    const state = await readState(pool);
    if (state && !state.recorded) await this.record(state, options.metadata);

    try {
      const head = source.directory
        ? await phase('snapshot', () => snapshotDirectory(this.cacheDir, source, gitOptions))
        : await phase('ls-remote', () => remoteHead(source, gitOptions));
      if (!force && state?.commit === head && state.loadFormat === LOAD_FORMAT) {
        await markChecked(pool, now());
        log.info({ commit: head }, 'registry sync: upstream unchanged');
        return { synced: false, commit: head, previous_commit: state.commit, counts: state.counts, duration_ms: Math.round(performance.now() - started) };
      }
      const commit = source.directory ? head : await phase('fetch', () => fetchHead(this.cacheDir, source, gitOptions));
      const files = await phase('read', () => readObjects(this.cacheDir, commit, gitOptions));
      const snapshot = await phase('parse', async () => buildSnapshot(files));
      if (snapshot.malformed.length)
        log.warn({ malformed: snapshot.malformed.length, first: snapshot.malformed.slice(0, 10) }, 'registry sync: malformed objects skipped');
      if (snapshot.roasSkipped)
        log.warn({ skipped: snapshot.roasSkipped }, 'registry sync: route objects without a valid ROA (bad max-length or host bits) skipped');
      const loaded: Omit<RegistryState, 'recorded' | 'checkedAt' | 'loadFormat'> = {
        commit,
        previousCommit: state?.commit ?? null,
        counts: snapshot.counts,
        syncedAt: now(),
        durationMs: 0,
        forced: force,
      };
      await phase('load', async () => {
        loaded.durationMs = Math.round(performance.now() - started);
        await replaceSnapshot(pool, snapshot, loaded, { timeoutMs: deadline - performance.now(), beforeCommit: this.options.beforeCommit });
      });
      await phase('record', () => this.record({ ...loaded, recorded: false, checkedAt: loaded.syncedAt, loadFormat: LOAD_FORMAT }, options.metadata));
      log.info({ commit, counts: snapshot.counts, ms: loaded.durationMs }, 'registry sync: loaded');
      return { synced: true, commit, previous_commit: loaded.previousCommit, counts: snapshot.counts, duration_ms: loaded.durationMs };
    } catch (err) {
      if (err instanceof UpstreamError) {
        log.error({ err, stderr: err.stderr }, 'registry sync: upstream failed');
        throw new SyncFailed(
          signal.aborted
            ? `registry sync timed out after ${Math.round(timeoutMs / 1000)} s; the replica keeps its data`
            : 'registry upstream failed; the replica keeps its data',
          { cause: err },
        );
      }
      if ((err as { code?: string }).code === '57014') {
        log.error({ err }, 'registry sync: load ran out of time');
        throw new SyncFailed(`registry sync timed out after ${Math.round(timeoutMs / 1000)} s; the replica keeps its data`, { cause: err });
      }
      throw err;
    }
  }

  /**
   * Appends the load's event after the tables committed. The event store is a
   * different transaction (KurrentDB may be another server), so a crash in
   * between leaves `recorded = false`, and the next round appends it first.
   */
  private async record(state: RegistryState, metadata: Partial<EventMetadata> = {}): Promise<void> {
    const event: RegistrySynced = {
      type: 'RegistrySynced',
      data: { commit: state.commit, previous_commit: state.previousCommit, counts: state.counts, duration_ms: state.durationMs, forced: state.forced },
    };
    await this.deps.store.append([{ streamId: REGISTRY_SYNC_STREAM, expected: 'any', events: [event] }], {
      actor: 'registry-sync',
      ...metadata,
      recordedAt: state.syncedAt.toISOString(),
    });
    await markRecorded(this.deps.pool, state.commit);
  }
}

function tokenUser(location: string): string | undefined {
  try {
    return decodeURIComponent(new URL(location).username) || undefined;
  } catch {
    return undefined;
  }
}
