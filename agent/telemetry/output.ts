import { describeOutcome, runCommand } from '../exec.js';

/** stdout of a program that must succeed; otherwise an Error saying how it ended (missing binary, exit code, stderr). */
export async function outputOf(argv: readonly string[], timeoutMs = 10_000): Promise<string> {
  const outcome = await runCommand(argv, timeoutMs);
  if (outcome.code !== 0) throw new Error(describeOutcome(argv, outcome));
  return outcome.stdout;
}
