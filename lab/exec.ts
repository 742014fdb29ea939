import { runCommand, type CommandOutcome } from '../agent/exec.js';

/** A step of the lab that failed; the message says which and why (the command's own output). */
export class LabError extends Error {
  override name = 'LabError';
}

export type { CommandOutcome };

/** Runs `argv` (no shell) and answers its outcome; never rejects. */
export const attempt = (argv: readonly string[], timeoutMs = 30_000): Promise<CommandOutcome> => runCommand(argv, timeoutMs);

/** Runs `argv` and answers its stdout; a non-zero exit is a `LabError` with the command and its stderr. */
export async function run(argv: readonly string[], timeoutMs = 30_000): Promise<string> {
  const outcome = await runCommand(argv, timeoutMs);
  if (outcome.code !== 0) {
    const why = outcome.error ?? `exited ${outcome.code}: ${(outcome.stderr.trim() || outcome.stdout.trim()).split('\n').slice(-3).join(' | ')}`;
    throw new LabError(`${argv.join(' ')}: ${why}`);
  }
  return outcome.stdout;
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Polls `check` every `everyMs` until it answers a value other than undefined, or throws `LabError(what)` after `timeoutMs`. */
export async function waitFor<T>(what: string, timeoutMs: number, check: () => Promise<T | undefined>, everyMs = 500): Promise<T> {
  const until = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch (err) {
      last = err;
    }
    if (Date.now() > until) throw new LabError(`${what}: not within ${Math.round(timeoutMs / 1000)} s${last ? ` (${(last as Error).message})` : ''}`);
    await sleep(everyMs);
  }
}
