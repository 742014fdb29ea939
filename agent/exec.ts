import { execFile } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { delimiter, isAbsolute, join } from 'node:path';

export interface CommandOutcome {
  /** Exit code; null when the program could not start or was killed (see `error`). */
  code: number | null;
  stdout: string;
  stderr: string;
  /** Why the program did not run to an exit code (`spawn birdc ENOENT`, `timed out`). */
  error: string | null;
}

/** Runs `argv` without a shell. Never rejects: a missing program or a timeout is an outcome like a failure. */
export function runCommand(argv: readonly string[], timeoutMs = 60_000): Promise<CommandOutcome> {
  return new Promise((resolve) => {
    execFile(argv[0], argv.slice(1), { timeout: timeoutMs, maxBuffer: 16 * 1024 * 1024, encoding: 'utf8' }, (err, stdout, stderr) => {
      if (!err) return resolve({ code: 0, stdout, stderr, error: null });
      const e = err as NodeJS.ErrnoException & { code?: number | string; killed?: boolean };
      const code = typeof e.code === 'number' ? e.code : null;
      const error = code !== null ? null : e.killed ? `timed out after ${timeoutMs} ms` : e.message;
      resolve({ code, stdout: stdout ?? '', stderr: stderr ?? '', error });
    });
  });
}

/** One line saying how a command ended, for apply steps and doctor lines. */
export function describeOutcome(argv: readonly string[], outcome: CommandOutcome): string {
  if (outcome.error) return `${argv.join(' ')}: ${outcome.error}`;
  const output = (outcome.stderr.trim() || outcome.stdout.trim()).split('\n').slice(-3).join(' | ');
  return `${argv.join(' ')} exited ${outcome.code}${output ? `: ${output}` : ''}`;
}

/** The absolute path of `program` (as given when it contains a slash, else searched on PATH), or null when not executable. */
export function findExecutable(program: string, path = process.env.PATH ?? ''): string | null {
  const candidates = program.includes('/') ? [program] : [...path.split(delimiter).filter(isAbsolute), '/usr/sbin', '/sbin'].map((dir) => join(dir, program));
  for (const candidate of candidates) {
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return null;
}
