import { resolve } from 'node:path';
import { Command, CommanderError, Option } from 'commander';
import { apiBase, DEFAULTS, LOG_LEVELS, MODES, readConfigFile, UsageError, WIREGUARD_IMPLEMENTATION_ENV, type FileSettings, type Mode } from './config.js';
import { WIREGUARD_IMPLEMENTATIONS, type WireguardSetting } from './wireguard/implementation.js';
import type { AgentCommands } from './runtime.js';

/** What a run of `dn42-agent` does: the long-lived daemon, one reconcile, or the self check. */
export type RunKind = 'daemon' | 'once' | 'doctor';

/** The effective settings: command line over configuration file over defaults. */
export interface AgentSettings {
  run: RunKind;
  mode: Mode;
  /** API base with the route prefix (`https://control.example/control/v1`); null offline. */
  controllerUrl: string | null;
  enrollmentToken: string | null;
  requestedNodeId: string | null;
  hostname: string | null;
  stateDir: string;
  /** Null: `<state-dir>/nodes/<node_id>/rendered`, known once the node id is. */
  renderedDir: string | null;
  desiredStatePath: string | null;
  logLevel: (typeof LOG_LEVELS)[string];
  birdSocket: string;
  /** The file `birdc configure` loads; null: the rendered `bird.conf`. */
  birdConfig: string | null;
  birdKernel: boolean;
  reconcileIntervalSeconds: number;
  heartbeatIntervalSeconds: number;
  routingIntervalSeconds: number;
  prefixFlapsIntervalSeconds: number;
  /** `auto`, `kernel` or `userspace`: which WireGuard makes the devices. */
  wireguardImplementation: WireguardSetting;
  /** Where `wireguard-go` and `wg` keep their UAPI sockets. */
  wireguardSocketDir: string;
  /** Program argv prefixes; `birdc` already carries `-s <bird_socket>`. */
  commands: AgentCommands;
}

interface Flags {
  config?: string;
  controllerUrl?: string;
  enrollmentToken?: string;
  requestedNodeId?: string;
  hostname?: string;
  stateDir?: string;
  renderedDir?: string;
  desiredState?: string;
  mode?: Mode;
  once?: boolean;
  planOnly?: boolean;
  doctor?: boolean;
  logLevel?: string;
  wireguardImplementation?: WireguardSetting;
}

function program(version: string): Command {
  return new Command('dn42-agent')
    .description('dn42 node agent: enroll, pull the desired state, render and apply BIRD 2, WireGuard and DNS, report')
    .version(version)
    .option('--config <path>', 'agent configuration file (JSON or key = value)')
    .option('--controller-url <url>', 'control server base URL (required in daemon mode)')
    .option('--enrollment-token <token>', 'one-time enrollment token')
    .option('--requested-node-id <id>', 'node id to bind (default: inferred from the state dir)')
    .option('--hostname <fqdn>', 'overrides the inventory hostname')
    .option('--state-dir <path>', `local state directory (default ${DEFAULTS.state_dir})`)
    .option('--rendered-dir <path>', 'rendered output directory (default <state-dir>/nodes/<node_id>/rendered)')
    .option('--desired-state <path>', 'desired state JSON for offline runs')
    .addOption(new Option('--mode <mode>', 'apply, write-rendered or plan-only (default apply)').choices(MODES))
    .option('--once', 'single reconcile then exit')
    .option('--plan-only', 'same as --once --mode plan-only')
    .option('--doctor', 'self check then exit')
    .option('--log-level <level>', 'DEBUG, INFO, WARNING, ERROR or CRITICAL (default INFO)')
    .addOption(
      new Option('--wireguard-implementation <kind>', `auto, kernel or userspace (wireguard-go); env ${WIREGUARD_IMPLEMENTATION_ENV} (default auto)`).choices(
        WIREGUARD_IMPLEMENTATIONS,
      ),
    )
    .exitOverride()
    .configureOutput({ writeErr: () => {} });
}

/** The contract's rules between options; each violation is one `UsageError` line. */
function checkRules(flags: Flags, merged: { mode: Mode; controllerUrl?: string }): RunKind {
  const verbs = (['once', 'planOnly', 'doctor'] as const).filter((v) => flags[v]);
  if (verbs.length > 1)
    throw new UsageError(
      `${verbs
        .map(flagName)
        .join(verbs.length > 2 ? ', ' : ' and ')
        .replace(/, (?=[^,]*$)/, ' and ')} are mutually exclusive`,
    );
  if (flags.planOnly && flags.mode !== undefined && flags.mode !== 'plan-only') throw new UsageError(`--plan-only conflicts with --mode ${flags.mode}`);
  if (flags.controllerUrl !== undefined && flags.desiredState !== undefined)
    throw new UsageError('--controller-url and --desired-state are mutually exclusive');
  if (flags.doctor) return 'doctor';
  if (flags.once || flags.planOnly) {
    if (!merged.controllerUrl && flags.desiredState === undefined)
      throw new UsageError(`${flags.once ? '--once' : '--plan-only'} needs --controller-url or --desired-state`);
    return 'once';
  }
  if (flags.desiredState !== undefined) throw new UsageError('--desired-state needs --once or --plan-only (daemon mode needs --controller-url)');
  if (!merged.controllerUrl) throw new UsageError('daemon mode needs --controller-url');
  if (merged.mode === 'plan-only') throw new UsageError('daemon mode cannot run with --mode plan-only');
  return 'daemon';
}

const absolute = (path: string | undefined): string | null => (path === undefined ? null : resolve(path));

const flagName = (v: 'once' | 'planOnly' | 'doctor') => (v === 'planOnly' ? '--plan-only' : `--${v}`);

function commandsOf(file: FileSettings, birdSocket: string): AgentCommands {
  const commands = { ...DEFAULTS.commands, ...file.commands };
  return { ...commands, birdc: [...commands.birdc, '-s', birdSocket] };
}

/**
 * Parses the command line (without `node` and the script) into settings. Throws
 * `UsageError` for every rule violation and unreadable configuration; `--help`
 * and `--version` come back as `{ exit }` after printing.
 */
export function parseCommandLine(
  argv: readonly string[],
  version: string,
  print: (text: string) => void = (t) => process.stdout.write(t),
  env: NodeJS.ProcessEnv = process.env,
): AgentSettings | { exit: number } {
  const cli = program(version).configureOutput({ writeOut: print, writeErr: () => {} });
  try {
    cli.parse([...argv], { from: 'user' });
  } catch (err) {
    if (!(err instanceof CommanderError)) throw err;
    if (err.exitCode === 0) return { exit: 0 };
    throw new UsageError(err.message.replace(/^error: /, ''));
  }
  const flags = cli.opts<Flags>();
  const file = flags.config ? readConfigFile(flags.config) : {};
  // Offline runs ignore the file's controller: `--desired-state` on the command line wins.
  const controller = flags.controllerUrl ?? (flags.desiredState === undefined ? file.controller_url : undefined);
  const mode = flags.planOnly ? 'plan-only' : (flags.mode ?? file.mode ?? DEFAULTS.mode);
  const run = checkRules(flags, { mode, controllerUrl: controller });
  const logLevel = flags.logLevel ?? file.log_level ?? DEFAULTS.log_level;
  if (!(logLevel.toLowerCase() in LOG_LEVELS)) throw new UsageError(`invalid --log-level ${logLevel}: one of DEBUG, INFO, WARNING, ERROR, CRITICAL`);
  const birdSocket = file.bird_socket ?? DEFAULTS.bird_socket;
  const fromEnv = env[WIREGUARD_IMPLEMENTATION_ENV];
  if (fromEnv !== undefined && fromEnv !== '' && !(WIREGUARD_IMPLEMENTATIONS as readonly string[]).includes(fromEnv))
    throw new UsageError(`invalid ${WIREGUARD_IMPLEMENTATION_ENV} ${fromEnv}: one of ${WIREGUARD_IMPLEMENTATIONS.join(', ')}`);
  const wireguardImplementation =
    flags.wireguardImplementation ??
    (fromEnv ? (fromEnv as WireguardSetting) : undefined) ??
    file.wireguard_implementation ??
    DEFAULTS.wireguard_implementation;
  return {
    run,
    mode,
    controllerUrl: controller ? apiBase(controller) : null,
    enrollmentToken: flags.enrollmentToken ?? file.enrollment_token ?? null,
    requestedNodeId: flags.requestedNodeId ?? file.requested_node_id ?? null,
    hostname: flags.hostname ?? file.hostname ?? null,
    // Absolute: rendered BIRD and BIND files include their siblings by absolute path.
    stateDir: resolve(flags.stateDir ?? file.state_dir ?? DEFAULTS.state_dir),
    renderedDir: absolute(flags.renderedDir ?? file.rendered_dir),
    desiredStatePath: absolute(flags.desiredState),
    logLevel: LOG_LEVELS[logLevel.toLowerCase()],
    birdSocket,
    birdConfig: absolute(file.bird_config),
    birdKernel: file.bird_kernel ?? DEFAULTS.bird_kernel,
    reconcileIntervalSeconds: file.reconcile_interval_seconds ?? DEFAULTS.reconcile_interval_seconds,
    heartbeatIntervalSeconds: file.heartbeat_interval_seconds ?? DEFAULTS.heartbeat_interval_seconds,
    routingIntervalSeconds: file.routing_interval_seconds ?? DEFAULTS.routing_interval_seconds,
    prefixFlapsIntervalSeconds: file.prefix_flaps_interval_seconds ?? DEFAULTS.prefix_flaps_interval_seconds,
    wireguardImplementation,
    wireguardSocketDir: resolve(file.wireguard_socket_dir ?? DEFAULTS.wireguard_socket_dir),
    commands: commandsOf(file, birdSocket),
  };
}
