// Runs the benchmarks: all of them, or those named as arguments
// (`npm run bench -- append`). Each prints one JSON line per measured case on
// stdout; progress goes to stderr.
import { stopTestServer } from '../spec/support/database.js';
import { agentWsBench } from './agent-ws.js';
import { appendBench } from './append.js';
import { cliHelpBench } from './cli-help.js';
import { consoleCostBench } from './console-cost.js';
import { fanoutBench } from './fanout.js';
import { flapLabBench } from './flap-lab.js';
import { labBench } from './lab.js';
import { provisionBench } from './provision.js';
import { publicMapBench } from './public-map.js';
import { rebuildBench } from './rebuild.js';
import { registryBench } from './registry.js';
import { replicaReadsBench } from './replica-reads.js';
import { siteBench } from './site.js';
import { storageBench } from './storage.js';
import { progress, type Benchmark } from './support.js';
import { telemetryIngestBench } from './telemetry-ingest.js';
import { concurrentWritesBench, fleetScaleBench } from './writes.js';

/** Every benchmark; a new one is one more entry here. */
const benchmarks: readonly Benchmark[] = [
  appendBench,
  rebuildBench,
  registryBench,
  provisionBench,
  agentWsBench,
  fanoutBench,
  publicMapBench,
  siteBench,
  telemetryIngestBench,
  storageBench,
  concurrentWritesBench,
  fleetScaleBench,
  consoleCostBench,
  replicaReadsBench,
  cliHelpBench,
  flapLabBench,
  labBench,
];

async function main(args: readonly string[]): Promise<void> {
  if (args.includes('--help') || args.includes('-h')) {
    for (const b of benchmarks) process.stderr.write(`${b.name.padEnd(12)} ${b.description}\n`);
    return;
  }
  const unknown = args.filter((a) => !benchmarks.some((b) => b.name === a));
  if (unknown.length > 0) throw new Error(`unknown benchmark(s) ${unknown.join(', ')} (known: ${benchmarks.map((b) => b.name).join(', ')})`);
  if (!globalThis.gc) progress('warning: run with --expose-gc (npm run bench does) for meaningful heap figures');
  const selected = args.length === 0 ? benchmarks : benchmarks.filter((b) => args.includes(b.name));
  try {
    for (const bench of selected) {
      const start = Date.now();
      await bench.run();
      progress(`${bench.name} done in ${((Date.now() - start) / 1000).toFixed(1)} s`);
    }
  } finally {
    await stopTestServer();
  }
}

main(process.argv.slice(2)).catch((err) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exitCode = 1;
});
