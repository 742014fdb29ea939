import type pg from 'pg';
import { Conflict } from '../domain/errors.js';
import {
  decideHealth,
  decideSessions,
  deriveHealth,
  foldNodeStatus,
  nodeStatusStream,
  type HealthVerdict,
  type NodeStatusEvent,
  type NodeStatusState,
} from '../domain/telemetry/health.js';
import type { ApplyResult, PrefixFlaps, ReconciliationReport, RoutingTable, RuntimeSnapshot, WireguardReresolve, WireguardTraffic } from '../domain/telemetry/reports.js';
import type { BackgroundTasks } from '../infra/background.js';
import { withTransaction } from '../infra/db/pool.js';
import { scheduleSingleton, type SingletonJob } from '../infra/db/singleton.js';
import { WrongExpectedVersion, type EventMetadata, type EventStore } from '../infra/eventstore/types.js';
import type { Logger } from '../infra/logger.js';
import { pruneTelemetry } from '../infra/telemetry/retention.js';
import {
  allNodeStatus,
  archiveInterfaceTraffic,
  archiveSelfMetrics,
  insertRoutingTable,
  insertStatusEvent,
  insertWireguardTraffic,
  nodeStatus,
  replacePrefixFlaps,
  setRecordedHealth,
  trafficTotals,
  upsertApply,
  upsertReport,
  upsertSnapshot,
  type TrafficTotals,
} from '../infra/telemetry/store.js';
import { currentNodeStatus } from '../projections/node-status/queries.js';

/**
 * Agent reports: samples into the telemetry tables, transitions (node health,
 * BGP session state) as events in `node-status-<node_id>`.
 */
export interface TelemetryDeps {
  pool: pg.Pool;
  store: EventStore;
  log: Logger;
  background: BackgroundTasks;
}

/**
 * Runtime snapshot: the status upsert and its status event commit together, then
 * the health transition (if any) is appended; the caller answers after that.
 * The archives and the session flap comparison run afterwards in the background
 * and only log a failure: a lost archive row is a gap in a graph, not a lie.
 */
export async function recordSnapshot(deps: TelemetryDeps, snapshot: RuntimeSnapshot, metadata: EventMetadata, now: Date): Promise<HealthVerdict> {
  const verdict = await withTransaction(deps.pool, async (tx) => {
    const inputs = await upsertSnapshot(tx, snapshot, now);
    const current = deriveHealth(inputs, now);
    await insertStatusEvent(tx, snapshot.node_id, { kind: 'snapshot', generation: snapshot.generation ?? null, status: current.health, drift_count: null, payload: snapshot }, now);
    return current;
  });
  await recordHealth(deps, snapshot.node_id, verdict, metadata, now);
  const nodeId = snapshot.node_id;
  const afterwards = async (what: string, work: () => Promise<unknown>) => {
    try {
      await work();
    } catch (err) {
      deps.log.error({ err, node_id: nodeId, requestId: metadata.requestId }, `runtime snapshot: ${what} failed`);
    }
  };
  void deps.background.run(
    Promise.all([
      afterwards('interface traffic archive', () => archiveInterfaceTraffic(deps.pool, snapshot, now)),
      afterwards('self-metrics archive', () => archiveSelfMetrics(deps.pool, snapshot, now)),
      afterwards('session flap comparison', () => compareSessions(deps, snapshot, metadata)),
    ]),
  );
  return verdict;
}

/** Appends the health transition when the verdict differs from the recorded health. */
async function recordHealth(deps: TelemetryDeps, nodeId: string, verdict: HealthVerdict, metadata: EventMetadata, now: Date): Promise<void> {
  await appendTransitions(deps, nodeId, (state) => decideHealth(nodeId, state, verdict), metadata);
  // Race: two reports of one node may decide concurrently; the stream's version
  // orders the transitions, but these column writes may land in either order. A
  // column left behind differs from the derived health, so the job's sweep comes
  // back here, finds the stream already right and corrects the column.
  await setRecordedHealth(deps.pool, nodeId, verdict.health, now);
}

/** Re-derives health from the stored inputs (after an apply or a reconciliation) and records a change. */
async function refreshHealth(deps: TelemetryDeps, nodeId: string, metadata: EventMetadata, now: Date): Promise<void> {
  const inputs = await nodeStatus(deps.pool, nodeId);
  if (inputs) await recordHealth(deps, nodeId, deriveHealth(inputs, now), metadata, now);
}

/** Session flap comparison: each BGP session whose state changed since the last snapshot is one event. */
export async function compareSessions(deps: TelemetryDeps, snapshot: RuntimeSnapshot, metadata: EventMetadata): Promise<number> {
  const events = await appendTransitions(deps, snapshot.node_id, (state) => decideSessions(snapshot.node_id, state, snapshot.bgp_protocols), metadata);
  return events.length;
}

/** Past this many events read behind the read model, a report logs that `node_status_current` wants a rebuild. */
const LONG_TAIL = 100;
const APPEND_ATTEMPTS = 30;

/**
 * What the node's transitions recorded so far, and the stream version that is:
 * its `node_status_current` row plus the events of the stream after the row's
 * version. With the inline projection that tail is empty, so a report costs the
 * same however long the stream has grown; the tail keeps the answer right when
 * the projection runs behind (KurrentDB) or has no row yet (added to a running
 * system, before `projections rebuild node-status`).
 */
async function loadNodeStatus(deps: TelemetryDeps, nodeId: string): Promise<{ state: NodeStatusState; version: number }> {
  const row = await currentNodeStatus(deps.pool, nodeId);
  const tail = await deps.store.readStream(nodeStatusStream(nodeId), { fromVersion: row ? row.version + 1 : 0 });
  if (tail.length > LONG_TAIL) deps.log.warn({ node_id: nodeId, events: tail.length }, 'node status read model is behind its stream; run `projections rebuild node-status`');
  return {
    state: foldNodeStatus(tail.map((e) => ({ type: e.type, data: e.data }) as NodeStatusEvent), row?.state),
    version: tail.at(-1)?.version ?? row?.version ?? -1,
  };
}

/**
 * Decides a node's next transitions from its recorded state and appends them
 * expecting the stream at the version that state was read at.
 * Race: two reports of one node decide on the same state; the second append finds
 * the stream moved and fails, and is decided again on the new state, so a
 * transition is never recorded twice (the retry of `execute` in commands/handle.ts).
 */
async function appendTransitions(
  deps: TelemetryDeps,
  nodeId: string,
  decide: (state: NodeStatusState) => NodeStatusEvent[],
  metadata: EventMetadata,
): Promise<NodeStatusEvent[]> {
  const streamId = nodeStatusStream(nodeId);
  for (let attempt = 1; ; attempt++) {
    const { state, version } = await loadNodeStatus(deps, nodeId);
    const events = decide(state);
    if (events.length === 0) return events;
    try {
      await deps.store.append([{ streamId, expected: version < 0 ? 'no_stream' : version, events }], metadata);
      return events;
    } catch (err) {
      if (!(err instanceof WrongExpectedVersion)) throw err;
      if (attempt >= APPEND_ATTEMPTS) throw new Conflict(`${streamId} was modified concurrently; retry`);
      await new Promise((res) => setTimeout(res, Math.random() * Math.min(50, 2 * attempt)));
    }
  }
}

export async function recordReconciliation(deps: TelemetryDeps, report: ReconciliationReport, metadata: EventMetadata, now: Date): Promise<void> {
  await withTransaction(deps.pool, async (tx) => {
    await upsertReport(tx, report, now);
    await insertStatusEvent(tx, report.node_id, { kind: 'report', generation: report.generation, status: report.status, drift_count: report.drift_items.length, payload: report }, now);
  });
  await refreshHealth(deps, report.node_id, metadata, now);
}

export async function recordApply(deps: TelemetryDeps, apply: ApplyResult, metadata: EventMetadata, now: Date): Promise<void> {
  await withTransaction(deps.pool, async (tx) => {
    await upsertApply(tx, apply, now);
    await insertStatusEvent(tx, apply.node_id, { kind: 'apply', generation: apply.generation, status: apply.status, drift_count: null, payload: apply }, now);
  });
  await refreshHealth(deps, apply.node_id, metadata, now);
}

export interface ReresolveOutcome {
  checked: number;
  reresolved: number;
}

export async function recordReresolve(deps: TelemetryDeps, result: WireguardReresolve, now: Date): Promise<ReresolveOutcome> {
  const outcome = { checked: result.interfaces.length, reresolved: result.interfaces.filter((i) => i.reresolved).length };
  const status = result.interfaces.some((i) => i.error !== null) ? 'error' : outcome.reresolved > 0 ? 'reresolved' : 'unchanged';
  await insertStatusEvent(deps.pool, result.node_id, { kind: 'reresolve', generation: null, status, drift_count: null, payload: result }, now);
  return outcome;
}

export async function recordRoutingTable(deps: TelemetryDeps, table: RoutingTable, now: Date): Promise<number> {
  return withTransaction(deps.pool, (tx) => insertRoutingTable(tx, table, now));
}

/** Replaces the node's prefix flap table in one transaction; returns how many entries it holds. */
export async function recordPrefixFlaps(deps: TelemetryDeps, flaps: PrefixFlaps, now: Date): Promise<number> {
  await withTransaction(deps.pool, (tx) => replacePrefixFlaps(tx, flaps, now));
  return new Set(flaps.entries.map((e) => `${e.prefix} ${e.peer_asn}`)).size;
}

export async function recordWireguardTraffic(deps: TelemetryDeps, sample: WireguardTraffic, now: Date): Promise<TrafficTotals> {
  const totals = trafficTotals(sample);
  await insertWireguardTraffic(deps.pool, sample, totals, now);
  return totals;
}

/** Nodes whose derived health moved without a report (a snapshot grew stale) get their transition recorded. */
export async function sweepHealth(deps: TelemetryDeps, now: Date): Promise<string[]> {
  const changed: string[] = [];
  for (const [nodeId, row] of await allNodeStatus(deps.pool)) {
    const verdict = deriveHealth(row, now);
    if (verdict.health === row.recorded_health) continue;
    await recordHealth(deps, nodeId, verdict, { actor: 'telemetry-job', recordedAt: now.toISOString() }, now);
    changed.push(nodeId);
  }
  return changed;
}

export const TELEMETRY_JOB = 'telemetry-maintenance';
export const TELEMETRY_JOB_INTERVAL_MS = 60_000;

/** One round of the single-instance telemetry job: retention (60 days), then the staleness sweep. */
export async function telemetryMaintenance(deps: TelemetryDeps, now: Date): Promise<{ deleted: Record<string, number>; stale: string[] }> {
  const deleted = await pruneTelemetry(deps.pool, now);
  const stale = await sweepHealth(deps, now);
  return { deleted, stale };
}

/** Starts the telemetry job: every minute one instance (advisory lock) runs `telemetryMaintenance`. */
export function startTelemetryJob(deps: TelemetryDeps, now: () => Date, intervalMs = TELEMETRY_JOB_INTERVAL_MS): SingletonJob {
  return scheduleSingleton(
    deps.pool,
    TELEMETRY_JOB,
    intervalMs,
    async () => {
      const { deleted, stale } = await telemetryMaintenance(deps, now());
      const total = Object.values(deleted).reduce((a, b) => a + b, 0);
      if (total > 0 || stale.length > 0) deps.log.info({ deleted, stale }, 'telemetry maintenance');
    },
    deps.log,
  );
}
