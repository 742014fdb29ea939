import { spawn } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { runCommand } from '../../../agent/exec.js';

/** A BIRD 2 daemon the spec started; `stop()` ends it and resolves once it has exited. */
export interface BirdProcess {
  socket: string;
  stop(): Promise<void>;
}

const READY_MS = 20_000;

/**
 * Runs `bird -f -c <conf> -s <socket> <extra>` in the foreground, as a child of
 * the spec, and resolves once its control socket answers `show status`.
 *
 * Why the foreground and not a daemonising `bird -P <pid file>` stopped by the
 * pid it wrote: the daemon writes its pid after the forking parent has exited
 * and after it has let go of stdout, so a spec that read the file as soon as
 * `bird` returned could read '' under load; `process.kill(Number(''))` is
 * `process.kill(0)`, which signals the spec's own process group: mocha died
 * with SIGTERM (exit 143) and the BIRD it meant to stop kept running. A child
 * is signalled through its own handle, so nothing else can be hit.
 */
export async function spawnBird(conf: string, socket: string, extra: readonly string[] = [], wrapper: readonly string[] = []): Promise<BirdProcess> {
  // `wrapper` runs BIRD through another program that execs it (`ip netns exec <ns>`), so the child is still BIRD.
  const argv = [...wrapper, 'bird', '-f', '-c', conf, '-s', socket, ...extra];
  const child = spawn(argv[0], argv.slice(1), { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr = (stderr + d).slice(-4000)));
  let failed: Error | undefined;
  const exited = new Promise<void>((resolve) => {
    child.once('exit', () => resolve());
    child.once('error', (err) => {
      failed = err;
      resolve();
    });
  });
  const running = () => !failed && child.exitCode === null && child.signalCode === null;
  const stop = async () => {
    if (running()) child.kill('SIGTERM');
    await exited;
  };
  for (const until = Date.now() + READY_MS; ; await sleep(50) /* polls the control socket; fails with BIRD's own stderr */) {
    if (!running())
      throw new Error(`bird -c ${conf} ended before its control socket answered: ${failed?.message ?? `exit ${child.exitCode ?? child.signalCode}`} ${stderr}`);
    if ((await runCommand(['birdc', '-s', socket, 'show', 'status'])).code === 0) return { socket, stop };
    if (Date.now() > until) {
      await stop();
      throw new Error(`bird -c ${conf}: control socket ${socket} did not answer within ${READY_MS} ms; ${stderr}`);
    }
  }
}
