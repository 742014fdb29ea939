// (g) `dn42-control --help`: the whole process, start to exit, against bare
// `node -e ''` (the floor of any Node.js command), in alternating runs in the
// same run. The help runs from the prebuilt bundle (`npm run build:cli`, built
// here first), which loads commander and the command definitions and no
// TypeScript loader; the same help through tsx (what runs when the bundle is
// missing or older than its sources) is measured beside it.
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
  description: 'dn42-control --help (prebuilt bundle, and through tsx) against bare node -e, whole process, alternating',
  async run() {
    const runs = envInt('BENCH_CLI_RUNS', 9);
    await timed(['cli/build-bundle.mjs']);
    const help = ['cli/bin.mjs', '--help'];
    const helpThroughTsx = ['--import', 'tsx/esm', 'cli/main.ts', '--help'];
    const bare = ['-e', ''];
    await timed(help);
    await timed(helpThroughTsx);
    const h: number[] = [];
    const t: number[] = [];
    const b: number[] = [];
    for (let i = 0; i < runs; i++) {
      h.push(await timed(help));
      t.push(await timed(helpThroughTsx));
      b.push(await timed(bare));
      progress(`cli-help: run ${i + 1}/${runs}: help ${round(h[i])} ms, help through tsx ${round(t[i])} ms, bare node ${round(b[i])} ms`);
    }
    const median = (xs: number[]) =>
      percentile(
        [...xs].sort((x, y) => x - y),
        50,
      );
    report({
      bench: 'cli-help',
      runs,
      help_ms_p50: round(median(h)),
      help_through_tsx_ms_p50: round(median(t)),
      bare_node_ms_p50: round(median(b)),
      // time per run against `node -e ''`: 2 is twice the floor of any Node.js command
      help_vs_bare_node: ratio(median(h), median(b)),
      help_through_tsx_vs_bare_node: ratio(median(t), median(b)),
    });
  },
};
