import type { DaemonServices } from './daemon.js';
import { streamLogs } from './logs/stream.js';
import { runProbe } from './probes/index.js';
import { startTelemetry } from './telemetry/index.js';
import { checkForUpdate } from './update/index.js';

/** The daemon's telemetry, probe, log and update services (agent-ops' modules). */
export const agentServices: DaemonServices = {
  startTelemetry: (rt, ring, intervals = {}) => startTelemetry(rt, ring, Object.fromEntries(Object.entries(intervals).filter(([, ms]) => ms !== undefined))),
  runProbe,
  streamLogs,
  checkForUpdate: (rt, offer) => checkForUpdate(rt, offer),
};
