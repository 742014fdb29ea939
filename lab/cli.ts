import { Command, InvalidArgumentError, Option } from 'commander';
import { LabError } from './exec.js';
import { labStatus, startLab, stopLab, type LabStatus } from './lab.js';
import { DEFAULT_STATE_DIR } from './state.js';

/**
 * `npm run lab -- up|down|status`: the lab on the command line. `up` prints
 * progress, then as its last line one JSON object (the status); `status`
 * prints that object for the running lab; `down` removes the lab and exits 0
 * even when it was partly gone. A Ctrl-C during `up` takes down what was made.
 */

const count = (name: string) => (value: string) => {
  if (!/^\d+$/.test(value)) throw new InvalidArgumentError(`${name} must be a whole number`);
  return Number(value);
};

const say = (line: string) => process.stderr.write(`lab: ${line}\n`);
const printStatus = (status: LabStatus) => {
  const { problems, ...line } = status;
  for (const p of problems ?? []) say(`  ${p}`);
  process.stdout.write(`${JSON.stringify(line)}\n`);
};

const program = new Command('lab').description('a dn42 network in network namespaces on this machine (root)').showHelpAfterError();
const stateOption = () => new Option('--state-dir <dir>', 'where the lab keeps its state').default(DEFAULT_STATE_DIR);

program
  .command('up')
  .description('bring up the servers, N nodes and M portal peers; waits until every session is Established')
  .option('--nodes <n>', 'routing nodes', count('--nodes'), 3)
  .option('--peers <m>', 'external peers (through the portal)', count('--peers'), 1)
  .addOption(new Option('--wireguard <kind>', 'WireGuard implementation').choices(['auto', 'kernel', 'userspace']).default('auto'))
  .option('--timeout <seconds>', 'how long to wait for convergence', count('--timeout'), 240)
  .option('--keep', 'leave a lab that did not converge running, for a look')
  .addOption(stateOption())
  .action(async (o: { nodes: number; peers: number; wireguard: 'auto' | 'kernel' | 'userspace'; timeout: number; keep?: boolean; stateDir: string }) => {
    let interrupted = false;
    process.once('SIGINT', () => {
      interrupted = true;
      say('interrupted: taking the lab down');
      void stopLab(o.stateDir).finally(() => process.exit(130));
    });
    const started = Date.now();
    try {
      const lab = await startLab({
        nodes: o.nodes,
        peers: o.peers,
        wireguard: o.wireguard,
        stateDir: o.stateDir,
        convergeTimeoutS: o.timeout,
        keepOnFailure: o.keep,
        say,
      });
      if (interrupted) return;
      say(`converged in ${lab.convergeS} s after the agents started (${Math.round((Date.now() - started) / 1000)} s in all)`);
      say(`admin token: ${lab.adminToken}`);
      say(`console ${lab.consoleUrl}   portal ${lab.portalUrl}   (npm run lab -- down to remove it)`);
      printStatus(await lab.status());
      process.exit(0);
    } catch (err) {
      if (interrupted) return;
      say(`up failed: ${(err as Error).message}`);
      if (!(err instanceof LabError)) console.error(err);
      printStatus({ ...(await labStatus(o.stateDir)), lab: o.keep ? 'degraded' : 'down' });
      process.exit(1);
    }
  });

program
  .command('status')
  .description('print the running lab as one line of JSON')
  .addOption(stateOption())
  .action(async (o: { stateDir: string }) => {
    const status = await labStatus(o.stateDir);
    printStatus(status);
    process.exit(status.lab === 'up' ? 0 : 1);
  });

program
  .command('down')
  .description('remove everything the lab made (exits 0 even when it was partly gone)')
  .addOption(stateOption())
  .action(async (o: { stateDir: string }) => {
    try {
      const removed = await stopLab(o.stateDir);
      for (const r of removed) say(`removed ${r}`);
      process.stdout.write(`${JSON.stringify({ lab: 'down', removed: removed.length })}\n`);
    } catch (err) {
      say(`down: ${(err as Error).message}`);
    }
    process.exit(0);
  });

await program.parseAsync(process.argv);
