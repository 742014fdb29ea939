import type { DesiredState } from '../../domain/desired-state/schema.js';
import { applyInterfaces } from './interfaces.js';
import { applyWireguard, configureBird, reloadDns } from './services.js';
import type { ApplyTarget, StepResult } from './types.js';

type Step = [name: string, run: () => Promise<StepResult>];

/**
 * The live steps of an apply, in order: BIRD checks the new file first (a
 * broken config stops everything before a tunnel is touched), then `ip`,
 * `wg setconf`, `birdc configure`, `rndc reload`. The first failure stops the
 * run; later steps are reported `skipped`.
 */
export async function runLiveSteps(target: ApplyTarget, state: DesiredState, previous: DesiredState | null): Promise<StepResult[]> {
  const steps: Step[] = [
    ['bird-check', () => configureBird(target, true)],
    ['interfaces', () => applyInterfaces(target, state, previous)],
    ['wireguard', () => applyWireguard(target, state)],
    ['bird', () => configureBird(target, false)],
    ['dns', () => reloadDns(target, state)],
  ];
  const results: StepResult[] = [];
  for (const [name, run] of steps) {
    if (results.some((r) => r.status === 'failed')) {
      results.push({ name, status: 'skipped', detail: 'not run: an earlier step failed' });
      continue;
    }
    const result = await run();
    target.log[result.status === 'failed' ? 'error' : 'debug'](
      { step: name, status: result.status, detail: result.detail },
      `apply step ${name} ${result.status}`,
    );
    results.push(result);
  }
  return results;
}

/** The first failed step, if any. */
export const firstFailure = (steps: readonly StepResult[]): StepResult | undefined => steps.find((s) => s.status === 'failed');
