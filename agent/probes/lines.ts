import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';

/**
 * Runs `argv` (no shell) and hands every line of its stdout and stderr to
 * `onLine` as it comes. Resolves with the exit code (null when killed); an
 * abort kills the program. Rejects only when it cannot be started.
 */
export function streamLines(argv: readonly string[], onLine: (line: string) => void, signal?: AbortSignal): Promise<number | null> {
  return new Promise((resolve, reject) => {
    const child = spawn(argv[0], argv.slice(1), { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, LC_ALL: 'C' } });
    const kill = () => child.kill('SIGKILL');
    signal?.addEventListener('abort', kill, { once: true });
    let open = 2;
    let exit: number | null | undefined;
    const finish = () => {
      if (open > 0 || exit === undefined) return;
      signal?.removeEventListener('abort', kill);
      resolve(exit);
    };
    for (const stream of [child.stdout!, child.stderr!]) {
      const lines = createInterface({ input: stream, crlfDelay: Infinity });
      lines.on('line', onLine);
      lines.on('close', () => {
        open--;
        finish();
      });
    }
    child.on('error', (err) => {
      signal?.removeEventListener('abort', kill);
      reject(err);
    });
    child.on('exit', (code) => {
      exit = code;
      finish();
    });
  });
}
