import { readFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { DesiredState } from '../../domain/desired-state/schema.js';
import type { AppliedState } from '../runtime.js';
import { writeFileAtomic } from './atomic.js';
import { makeDir, PASS_THROUGH_DIR_MODE } from './dirs.js';

/** What `applied.json` keeps across restarts: the generation in force, its state, and the latest attempt's outcome. */
interface StoredApplied {
  generation: number | null;
  status: 'ok' | 'failed' | null;
  desired: DesiredState | null;
}

/**
 * The outcome of the latest reconcile, in memory for heartbeats and telemetry
 * and in `applied.json` so that a restarted agent reports what is in force
 * before its first apply (and an apply knows what to return to).
 */
export class AppliedStore {
  private state: AppliedState = { generation: null, status: null, desired: null, failures: 0 };

  constructor(private readonly path: string) {}

  async load(): Promise<AppliedState> {
    try {
      const stored = JSON.parse(await readFile(this.path, 'utf8')) as StoredApplied;
      this.state = { generation: stored.generation ?? null, status: stored.status ?? null, desired: stored.desired ?? null, failures: 0 };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
    return this.current();
  }

  current(): AppliedState {
    return { ...this.state };
  }

  async succeeded(generation: number | null, desired: DesiredState): Promise<void> {
    this.state = { ...this.state, generation, desired, status: 'ok' };
    await this.save();
  }

  /** A failed attempt: what is in force stays, the status and the failure count move. */
  async failed(): Promise<void> {
    this.state = { ...this.state, status: 'failed', failures: this.state.failures + 1 };
    await this.save();
  }

  private async save(): Promise<void> {
    const { generation, status, desired } = this.state;
    await makeDir(dirname(this.path), PASS_THROUGH_DIR_MODE);
    await writeFileAtomic(this.path, `${JSON.stringify({ generation, status, desired } satisfies StoredApplied)}\n`, 0o600);
  }
}
