// (g) `dn42-control --help`: the whole process, start to exit, against the floor
// any TypeScript entry point of this project pays (node with the tsx loader
// registered, doing nothing), in alternating pairs in the same run. The help
// loads commander and the command definitions only; the services, the
// database and oidc-provider are imported by the actions that use them.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { envInt, now, percentile, progress, ratio, report, round, type Benchmark } from './support.js';

const ROOT = fileURLToPath(new URL('../', import.meta.url));

/** Wall milliseconds of one `node ...args` from spawn to exit (output read and dropped). */
function timed(args: readonly string[]): Promise<number> {
  return new Promise((resolve, reject) => {
    const start = now();
    const child = spawn(process.execPath, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.resume();
    child.stderr.resume();
    child.once('error', reject);
    child.once('close', (code) => (code === 0 ? resolve(now() - start) : reject(new Error(`node ${args.join(' ')} exited with ${code}`))));
  });
}

export const cliHelpBench: Benchmark = {
  name: 'cli-help',
  description: 'dn42-control --help, whole process, against node with the tsx loader doing nothing (alternating pairs)',
  async run() {
    const runs = envInt('BENCH_CLI_RUNS', 9);
    const help = ['infra/cli/bin.mjs', '--help'];
    const floor = ['--import', 'tsx/esm', '-e', ''];
    const bare = ['-e', ''];
    await timed(help);
    await timed(floor);
    const h: number[] = [];
    const f: number[] = [];
    const b: number[] = [];
    for (let i = 0; i < runs; i++) {
      h.push(await timed(help));
      f.push(await timed(floor));
      b.push(await timed(bare));
      progress(`cli-help: run ${i + 1}/${runs}: help ${round(h[i])} ms, tsx floor ${round(f[i])} ms, bare node ${round(b[i])} ms`);
    }
    const median = (xs: number[]) => percentile([...xs].sort((x, y) => x - y), 50);
    report({
      bench: 'cli-help',
      runs,
      help_ms_p50: round(median(h)),
      tsx_floor_ms_p50: round(median(f)),
      bare_node_ms_p50: round(median(b)),
      // time per run: below 1 is faster than the floor, 1.2 is 20 % above it
      help_vs_tsx_floor: ratio(median(h), median(f)),
    });
  },
};
