import { parseCommandLine } from './cli.js';
import { UsageError } from './config.js';
import { Daemon } from './daemon.js';
import { runDoctor } from './doctor.js';
import { FatalError, Stopped } from './errors.js';
import { createAgentLogger } from './logger.js';
import { runOnce } from './once.js';
import { openSession } from './session.js';
import { agentVersion } from './version.js';

const out = (text: string) => void process.stdout.write(text);
const err = (text: string) => void process.stderr.write(text);

/**
 * `dn42-agent`: parses the command line and runs the daemon, one reconcile or
 * the doctor. Resolves with the exit code: 2 for a usage error (one line on
 * stderr), `--doctor` 0/1, `--once`/`--plan-only` 1 on a deploy failure, the
 * daemon 0 after SIGTERM or SIGINT (1 when enrollment is refused for good).
 */
export async function main(argv: readonly string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseCommandLine(argv, agentVersion(), out);
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    err(`dn42-agent: ${e.message}\n`);
    return 2;
  }
  if ('exit' in parsed) return parsed.exit;
  const settings = parsed;
  if (settings.run === 'doctor') return runDoctor(settings, out);

  const { log, ring } = createAgentLogger(settings.logLevel);
  const stop = new AbortController();
  const onSignal = (signal: NodeJS.Signals) => {
    log.info({ signal }, 'stopping');
    stop.abort();
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  try {
    if (settings.run === 'once') return await runOnce(settings, log, stop.signal, out);
    const session = await openSession(settings, log, stop.signal);
    // Loaded only for the daemon: one-shot runs need no telemetry, probe, log or update code.
    const { agentServices } = await import('./services.js');
    const daemon = new Daemon(session, ring, agentServices, {
      mode: settings.mode,
      reconcileIntervalMs: settings.reconcileIntervalSeconds * 1000,
      heartbeatIntervalMs: settings.heartbeatIntervalSeconds * 1000,
      telemetry: { routingMs: settings.routingIntervalSeconds * 1000, flapsMs: settings.prefixFlapsIntervalSeconds * 1000 },
    });
    await daemon.run(stop.signal);
    return 0;
  } catch (e) {
    if (e instanceof Stopped) return 0;
    if (e instanceof FatalError) {
      log.fatal(e.message);
      err(`dn42-agent: ${e.message}\n`);
      return 1;
    }
    throw e;
  } finally {
    process.off('SIGTERM', onSignal);
    process.off('SIGINT', onSignal);
  }
}

// The module is the program's entry (bin.mjs in the source tree, the bundle in a release).
const code = await main(process.argv.slice(2));
process.exit(code);
