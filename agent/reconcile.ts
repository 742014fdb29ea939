import { isDeepStrictEqual } from 'node:util';
import type { Logger } from 'pino';
import { deploy } from './apply/deploy.js';
import { reapplyDevice } from './apply/interfaces.js';
import type { StepResult } from './apply/types.js';
import type { Mode } from './config.js';
import { InvalidDesiredState, type Desired } from './desired.js';
import { TokenRefused } from './errors.js';
import { hasChanges, planFiles, type FilePlan } from './files/plan.js';
import { readFileSet } from './files/snapshot.js';
import { writeFileSet } from './files/write.js';
import { BIRD_FILES, readPresharedKeys, renderAll } from './render/index.js';
import type { DesiredState } from '../domain/desired-state/schema.js';
import type { RoaSet } from '../domain/rpki/roa.js';
import { driftItems, postApplyResult, postReconciliation, type DriftItem } from './report.js';
import type { AgentCommands, AgentRuntime } from './runtime.js';
import type { AppliedStore } from './state/applied.js';
import type { NodeLayout } from './state/layout.js';
import type { WireguardDevices } from './wireguard/devices.js';

/** The JSON summary of one reconcile (stdout of `--once` and `--plan-only`). */
export interface ReconcileSummary {
  node_id: string;
  mode: Mode;
  generation: number | null;
  /**
   * `planned` (plan-only), `written` (write-rendered), `succeeded`, `rolled_back`
   * or `failed` (apply), `in_sync` (daemon: nothing to do), `no_desired_state`
   * (the server has none yet), `pending_approval` (`--once`: the registration
   * is not accepted yet). `failed`, `rolled_back` and `pending_approval` are
   * deploy failures (exit 1): the node does not run the generation.
   */
  status: 'planned' | 'written' | 'succeeded' | 'rolled_back' | 'failed' | 'in_sync' | 'no_desired_state' | 'pending_approval';
  rendered_dir: string;
  changes: FilePlan | null;
  drift: DriftItem[];
  steps: StepResult[];
  error: string | null;
}

export interface ReconcilerOptions {
  nodeId: string;
  stateDir: string;
  renderedDir: string;
  node: NodeLayout;
  applied: AppliedStore;
  commands: AgentCommands;
  birdConfig: string | null;
  birdKernel: boolean;
  privateKey: string;
  log: Logger;
  /** Where the desired state comes from: the control server or an offline file; null: none published yet. */
  source(): Promise<Desired | null>;
  /** The runtime to report through; null offline. */
  rt: AgentRuntime | null;
  /** Makes the WireGuard devices (kernel or `wireguard-go`); absent: `ip link add … type wireguard`. */
  devices?: WireguardDevices;
  /** The ROA set to render for `state` (`agent/rpki/held.ts`); null: none (RPKI off, or none fetched yet). */
  roas?(state: DesiredState): Promise<RoaSet | null>;
}

/** The ROA files: data the agent refreshes between generations, so a difference in them is no drift. */
const ROA_FILES = new Set<string>(Object.values(BIRD_FILES.roa));
const withoutRoaFiles = (plan: FilePlan): FilePlan => ({
  ...plan,
  added: plan.added.filter((p) => !ROA_FILES.has(p)),
  changed: plan.changed.filter((p) => !ROA_FILES.has(p)),
  removed: plan.removed.filter((p) => !ROA_FILES.has(p)),
});

export const isDeployFailure = (summary: ReconcileSummary): boolean =>
  summary.status === 'failed' || summary.status === 'rolled_back' || summary.status === 'pending_approval';

/**
 * One reconcile: pull (or read) and validate the desired state, render it,
 * compare with the rendered dir, then plan, write or apply as the mode says,
 * and report. `force` applies even when the generation is in force and no file
 * differs (`--once` always does; the daemon skips such no-op applies).
 */
export class Reconciler {
  constructor(private readonly o: ReconcilerOptions) {}

  async reconcile(mode: Mode, force: boolean): Promise<ReconcileSummary> {
    const started = new Date();
    const base = { node_id: this.o.nodeId, mode, rendered_dir: this.o.renderedDir, changes: null, drift: [], steps: [] };
    let desired: Desired | null;
    try {
      desired = await this.o.source();
    } catch (err) {
      // A refused token is the caller's to renew; nothing can be reported with it.
      if (err instanceof TokenRefused) throw err;
      // An invalid document is a failed apply of its generation; an unreachable server is not (nothing was attempted).
      const invalid = err instanceof InvalidDesiredState;
      return this.failed({ ...base, generation: invalid ? err.generation : null, status: 'failed', error: (err as Error).message }, mode, started, invalid);
    }
    if (!desired) return { ...base, generation: null, status: 'no_desired_state', error: null };
    let files;
    try {
      const presharedKeys = await readPresharedKeys(this.o.stateDir, desired.state);
      const roas = (await this.o.roas?.(desired.state)) ?? null;
      files = renderAll({
        state: desired.state,
        wireguardPrivateKey: this.o.privateKey,
        renderedDir: this.o.renderedDir,
        kernel: this.o.birdKernel,
        presharedKeys,
        roas,
      });
    } catch (err) {
      return this.failed({ ...base, generation: desired.generation, status: 'failed', error: `render: ${(err as Error).message}` }, mode, started, true);
    }
    const plan = planFiles(files, await readFileSet(this.o.renderedDir));
    const applied = this.o.applied.current();
    const inForce =
      applied.desired !== null && (desired.generation !== null ? desired.generation === applied.generation : isDeepStrictEqual(desired.state, applied.desired));
    const summary: ReconcileSummary = {
      ...base,
      generation: desired.generation,
      status: 'planned',
      changes: plan,
      drift: inForce ? driftItems(withoutRoaFiles(plan)) : [],
      error: null,
    };
    if (mode === 'plan-only') return summary;
    if (mode === 'write-rendered') {
      await writeFileSet(this.o.renderedDir, files, plan);
      await this.report(summary);
      return { ...summary, status: 'written' };
    }
    if (!force && inForce && applied.status === 'ok' && !hasChanges(plan)) {
      await this.report(summary);
      return { ...summary, status: 'in_sync' };
    }
    return this.apply(summary, files, desired, started);
  }

  private async apply(summary: ReconcileSummary, files: Parameters<typeof planFiles>[0], desired: Desired, started: Date): Promise<ReconcileSummary> {
    const target = { commands: this.o.commands, renderedDir: this.o.renderedDir, birdConfig: this.o.birdConfig, log: this.o.log, devices: this.o.devices };
    const outcome = await deploy({ target, files, state: desired.state, previous: this.o.applied.current().desired, lastGoodDir: this.o.node.lastGood });
    if (outcome.status === 'succeeded') await this.o.applied.succeeded(desired.generation, desired.state);
    else await this.o.applied.failed();
    const done: ReconcileSummary = { ...summary, status: outcome.status, steps: outcome.steps, error: outcome.error };
    this.o.log[outcome.status === 'succeeded' ? 'info' : 'error'](
      { generation: desired.generation, status: outcome.status, error: outcome.error },
      `apply ${outcome.status}`,
    );
    if (this.o.rt && desired.generation !== null) {
      await postApplyResult(this.o.rt, {
        generation: desired.generation,
        status: outcome.status,
        started_at: started,
        error: outcome.error,
        steps: outcome.steps,
      });
    }
    await this.report(done);
    return done;
  }

  /**
   * A reconcile that ended before an apply: logged and reported. When a document
   * was there but could not be applied (`attempted`: invalid, or not renderable),
   * it counts as a failed apply of its generation and is reported as one.
   */
  private async failed(summary: ReconcileSummary, mode: Mode, started: Date, attempted: boolean): Promise<ReconcileSummary> {
    this.o.log.error({ generation: summary.generation }, `reconcile failed: ${summary.error}`);
    if (mode === 'plan-only') return summary;
    if (mode === 'apply' && attempted) await this.o.applied.failed();
    if (this.o.rt && mode === 'apply' && attempted && summary.generation !== null && summary.generation >= 1) {
      await postApplyResult(this.o.rt, { generation: summary.generation, status: 'failed', started_at: started, error: summary.error, steps: [] });
    }
    await this.report(summary);
    return summary;
  }

  /**
   * A device that came back bare (its `wireguard-go` was restarted) gets its
   * addresses and peers again from the applied state's files; nothing else is
   * touched. False when the interface is no longer applied or a command failed (logged).
   */
  async reapplyDevice(iface: string): Promise<boolean> {
    const state = this.o.applied.current().desired;
    const wanted = state?.interfaces.find((i) => i.name === iface);
    if (!wanted) return false;
    const target = { commands: this.o.commands, renderedDir: this.o.renderedDir, birdConfig: this.o.birdConfig, log: this.o.log, devices: this.o.devices };
    const result = await reapplyDevice(target, wanted);
    if (result.status === 'failed') {
      this.o.log.error({ interface: iface, error: result.detail }, `re-applying ${iface} failed`);
      return false;
    }
    this.o.log.info({ interface: iface }, `${iface} configured again`);
    return true;
  }

  /** `POST /agent/reconciliation-report`: `failed` for a failed reconcile, `drift` when files had been changed on the node, else `in_sync`. */
  private async report(summary: ReconcileSummary): Promise<void> {
    if (!this.o.rt) return;
    const failed = isDeployFailure(summary);
    const status = failed ? 'failed' : summary.drift.length > 0 ? 'drift' : 'in_sync';
    const generation = summary.generation ?? this.o.applied.current().generation;
    await postReconciliation(this.o.rt, { generation, status, drift_items: summary.drift, ...(failed ? { error: summary.error } : {}) });
  }
}
