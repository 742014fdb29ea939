#!/usr/bin/env node
// Stands in for wg(8) where the kernel has no WireGuard (this test machine):
// `show all dump` prints the dump file named by argv[2]; `set <if> peer <key> endpoint <ep>`
// records its argv in argv[3] and changes that peer's endpoint in the dump file,
// so a second round sees what the first one set, as with the real kernel.
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';

const [dumpFile, logFile, ...args] = process.argv.slice(2);
const dump = readFileSync(dumpFile, 'utf8');
if (args.join(' ') === 'show all dump') {
  process.stdout.write(dump);
} else if (args[0] === 'set' && args[2] === 'peer' && args[4] === 'endpoint' && args.length === 6) {
  appendFileSync(logFile, `${args.join(' ')}\n`);
  const lines = dump.split('\n').map((line) => {
    const f = line.split('\t');
    if (f.length === 9 && f[0] === args[1] && f[1] === args[3]) f[3] = args[5];
    return f.join('\t');
  });
  writeFileSync(dumpFile, lines.join('\n'));
} else {
  process.stderr.write(`Invalid subcommand: ${args.join(' ')}\n`);
  process.exit(1);
}
