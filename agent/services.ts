import type { DaemonServices } from './daemon.js';
import { streamLogs } from './logs/stream.js';
import { runProbe } from './probes/index.js';
import { startTelemetry } from './telemetry/index.js';
import { checkForUpdate } from './update/index.js';

/** The daemon's telemetry, probe, log and update services (agent-ops' modules). */
export const agentServices: DaemonServices = {
  startTelemetry: (rt, ring, options) => startTelemetry(rt, ring, options?.routingMs ? { routingMs: options.routingMs } : {}),
  runProbe,
  streamLogs,
  checkForUpdate: (rt, offer) => checkForUpdate(rt, offer),
};
