import type { DesiredState } from '../../domain/desired-state/schema.js';
import { planFiles, type FilePlan } from '../files/plan.js';
import { readFileSet, type FileEntry } from '../files/snapshot.js';
import { writeFileSet } from '../files/write.js';
import { firstFailure, runLiveSteps } from './steps.js';
import type { ApplyTarget, StepResult } from './types.js';

export interface DeployInput {
  target: ApplyTarget;
  files: readonly FileEntry[];
  state: DesiredState;
  /** The desired state whose files are in force (last successful apply); null before the first. */
  previous: DesiredState | null;
  /** Copy of the files of the last successful apply. */
  lastGoodDir: string;
}

export interface DeployOutcome {
  status: 'succeeded' | 'failed' | 'rolled_back';
  plan: FilePlan;
  steps: StepResult[];
  error: string | null;
}

/** Brings a directory to exactly `files`. */
async function syncDir(dir: string, files: readonly FileEntry[]): Promise<FilePlan> {
  const plan = planFiles(files, await readFileSet(dir));
  await writeFileSet(dir, files, plan);
  return plan;
}

const summary = (plan: FilePlan) => `${plan.added.length} added, ${plan.changed.length} changed, ${plan.removed.length} removed, ${plan.unchanged} unchanged`;

/**
 * Writes the rendered set and runs the live steps. On success the set becomes
 * the last good one. On a failure the previous files stay in force: the
 * rendered dir gets the last good set back (or what it held before, if nothing
 * was ever applied), and when a live step had already run, the steps run again
 * for the previous state so tunnels and BIRD return to it (`rolled_back`;
 * `failed` when there is nothing to return to or the return fails too).
 */
export async function deploy(input: DeployInput): Promise<DeployOutcome> {
  const { target } = input;
  const before = await readFileSet(target.renderedDir);
  const plan = planFiles(input.files, before);
  const steps: StepResult[] = [];
  try {
    await writeFileSet(target.renderedDir, input.files, plan);
    steps.push({ name: 'write', status: 'ok', detail: summary(plan) });
    steps.push(...(await runLiveSteps(target, input.state, input.previous)));
  } catch (err) {
    steps.push({ name: 'write', status: 'failed', detail: (err as Error).message });
  }
  const failed = firstFailure(steps);
  if (!failed) {
    await syncDir(input.lastGoodDir, input.files);
    return { status: 'succeeded', plan, steps, error: null };
  }
  const error = `${failed.name}: ${failed.detail ?? 'failed'}`;
  const restored = await restore(input, before, failed.name);
  steps.push(restored);
  return { status: restored.status === 'ok' && input.previous ? 'rolled_back' : 'failed', plan, steps, error };
}

/** Puts the previous files back and, when the live system was touched, re-applies the previous state. */
async function restore(input: DeployInput, before: Map<string, FileEntry>, failedStep: string): Promise<StepResult> {
  const { target } = input;
  try {
    const lastGood = await readFileSet(input.lastGoodDir);
    const files = input.previous && lastGood.size > 0 ? [...lastGood.values()] : [...before.values()];
    await syncDir(target.renderedDir, files);
    // Before `interfaces` nothing live changed (a BIRD check failure, a write failure).
    if (!input.previous || failedStep === 'write' || failedStep === 'bird-check') return { name: 'restore', status: 'ok', detail: 'previous files restored' };
    const again = await runLiveSteps(target, input.previous, input.state);
    const failed = firstFailure(again);
    if (failed)
      return { name: 'restore', status: 'failed', detail: `previous files restored; re-applying them failed at ${failed.name}: ${failed.detail ?? ''}` };
    return { name: 'restore', status: 'ok', detail: 'previous files restored and re-applied' };
  } catch (err) {
    return { name: 'restore', status: 'failed', detail: (err as Error).message };
  }
}
