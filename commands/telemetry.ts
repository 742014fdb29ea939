import { KnownFlapReports, replaceOverKnown, replacePrefixFlaps, type FlapWrite } from '../infra/telemetry/prefix-flaps.js';
import type pg from 'pg';
import {
  decideHealth,
  decideSessions,
  deriveHealth,
  foldNodeStatus,
  nodeStatusStream,
  type HealthVerdict,
  type NodeHealth,
  type NodeStatusEvent,
  type SessionRestart,
  type NodeStatusState,
} from '../domain/telemetry/health.js';
import type { ApplyResult, PrefixFlaps, ReconciliationReport, RuntimeSnapshot, WireguardReresolve, WireguardTraffic } from '../domain/telemetry/reports.js';
import type { BackgroundTasks } from '../infra/background.js';
import { GroupCommit } from '../infra/db/group-commit.js';
import { withTransaction } from '../infra/db/pool.js';
import { applyFailed } from '../domain/notify/from-facts.js';
import { fanOut } from './notify/fanout.js';
import { scheduleSingleton, type SingletonJob } from '../infra/db/singleton.js';
import type { EventMetadata, EventStore } from '../infra/eventstore/types.js';
import type { Logger } from '../infra/logger.js';
import { compactTelemetry } from '../infra/telemetry/compaction.js';
import { pruneTelemetry } from '../infra/telemetry/retention.js';
import { addReportToSeries, addSnapshotToSeries, SeriesBases } from '../infra/telemetry/series.js';
import { detectRestarts } from '../domain/flaps/session.js';
import { placeSample, type Placement } from '../domain/series/placement.js';
import {
  allNodeStatus,
  archiveSnapshot,
  insertStatusEvent,
  insertWireguardTrafficRows,
  nodeStatus,
  snapshotArchiveValues,
  trafficTotals,
  upsertApply,
  upsertReport,
  type TrafficSampleRow,
  type TrafficTotals,
} from '../infra/telemetry/store.js';
import { currentNodeStatus, recordedHealths } from '../projections/node-status/queries.js';
import { execute } from './handle.js';
import { readModelAndTail } from './read-model-tail.js';
import {
  inputsAfter,
  KnownSnapshots,
  readBeforeSnapshot,
  writeOverKnown,
  writeSnapshot,
  type BeforeSnapshot,
  type PreviousSnapshot,
} from '../infra/telemetry/snapshot-write.js';
import { StatusBaseCache } from '../infra/telemetry/status-bodies.js';
import type { KnownTables } from '../infra/telemetry/known-tables.js';
import { Validation } from '../domain/errors.js';

/**
 * Agent reports: samples into the telemetry tables, transitions (node health,
 * BGP session state) as events in `node-status-<node_id>`.
 */
export interface TelemetryDeps {
  pool: pg.Pool;
  store: EventStore;
  log: Logger;
  background: BackgroundTasks;
  /** Orders the snapshots of each node in this process (see `NodeQueue`); absent: no ordering beyond the row lock. */
  snapshotOrder?: NodeQueue;
  /** `NOTIFY_FLOOD_LIMIT` for the apply-failed notifications (default 20). */
  notifyFloodLimit?: number;
  /** The status bases this process has seen (made on first use); one per database. */
  statusBases?: StatusBaseCache;
  /** The routing tables this process stored last, per node (made on first use); one per database. */
  knownTables?: KnownTables;
  /** The snapshots this process wrote last, per node (made on first use); one per database. */
  knownSnapshots?: KnownSnapshots;
  /** The series counters this process wrote last, per node (made on first use); one per database. */
  seriesBases?: SeriesBases;
  /** The prefix flap reports this process wrote last, per node (made on first use); one per database. */
  knownFlaps?: KnownFlapReports;
  /** The traffic samples' group commit (made on first use): concurrent reports' samples in one statement. */
  trafficWrites?: GroupCommit<TrafficSampleRow>;
}

/**
 * Runtime snapshot: the status upsert and its status event commit together, then
 * the snapshot's transitions (health and BGP sessions, decided together) are one
 * append; the caller answers after that. The archives run afterwards in the
 * background and only log a failure: a lost archive row is a gap in a graph, not a lie.
 */
export function recordSnapshot(deps: TelemetryDeps, snapshot: RuntimeSnapshot, metadata: EventMetadata, now: Date): Promise<HealthVerdict> {
  const work = () => recordSnapshotInOrder(deps, snapshot, metadata, now);
  return deps.snapshotOrder ? deps.snapshotOrder.run(snapshot.node_id, work) : work();
}

/**
 * Snapshots of one node, compared in the order they arrive: each waits (without
 * a connection) for the previous one's upsert and transitions. One per process
 * (the agent report routes hold it); across processes the previous snapshot is
 * still read under its row lock, so the restart comparison pairs consecutive
 * stored snapshots, and `execute` records each state transition once.
 */
export class NodeQueue {
  private readonly tails = new Map<string, Promise<unknown>>();

  run<T>(nodeId: string, work: () => Promise<T>): Promise<T> {
    const mine = (this.tails.get(nodeId) ?? Promise.resolve()).then(work, work);
    const settled = mine.catch(() => undefined);
    this.tails.set(nodeId, settled);
    void settled.then(() => {
      if (this.tails.get(nodeId) === settled) this.tails.delete(nodeId);
    });
    return mine;
  }
}

async function recordSnapshotInOrder(deps: TelemetryDeps, snapshot: RuntimeSnapshot, metadata: EventMetadata, now: Date): Promise<HealthVerdict> {
  const nodeId = snapshot.node_id;
  const capturedAt = new Date(snapshot.captured_at).toISOString();
  const cache = deps.statusBases ?? (deps.statusBases = new StatusBaseCache());
  const knownSnapshots = deps.knownSnapshots ?? (deps.knownSnapshots = new KnownSnapshots());
  const decide = (restarts: readonly SessionRestart[], verdict: HealthVerdict) => (state: NodeStatusState) => [
    ...decideHealth(nodeId, state, verdict),
    ...decideSessions(nodeId, state, snapshot.bgp_protocols, capturedAt, restarts),
  ];
  /** The snapshot against what the node's previous one left. */
  const judge = (before: PreviousSnapshot) => {
    const inputs = inputsAfter(snapshot, before, now);
    return { before, inputs, verdict: deriveHealth(inputs, now), restarts: detectRestarts(before.previous, snapshot.bgp_protocols) };
  };
  /**
   * One statement on the row version this process wrote last; when another instance wrote since, once more on
   * the row that statement saw (consecutive snapshots alternating between instances). Undefined: the long way.
   */
  const writeOnKnown = async (known: { before: PreviousSnapshot; xmin: string } | undefined) => {
    for (let tries = 0; known && tries < 2; tries++) {
      const judged = judge(known.before);
      const written = await writeOverKnown(deps.pool, snapshot, known.xmin, judged.inputs, judged.verdict.health, now, cache);
      if (written === undefined) return undefined;
      if (!('stale' in written)) return { ...judged, ...written };
      known = written.stale;
    }
    return undefined;
  };
  const fast = await writeOnKnown(knownSnapshots.take(nodeId));
  const { before, verdict, restarts, recorded, xmin, made } = fast
    ? { ...fast, made: undefined }
    : await withTransaction(deps.pool, async (tx) => {
        const read = await readBeforeSnapshot(tx, nodeId);
        const judged = judge(read);
        const written = await writeSnapshot(tx, snapshot, judged.inputs, judged.verdict.health, now, cache);
        return { ...judged, recorded: read.recorded, ...written };
      });
  if (made) cache.set(made.cacheKey, made.base);
  // Most snapshots change nothing the stream records: then the event store is not touched at all.
  if (!nothingToRecord(deps, recorded, decide(restarts, verdict))) await appendTransitions(deps, nodeId, decide(restarts, verdict), metadata);
  knownSnapshots.set(nodeId, {
    before: { previous: snapshot.bgp_protocols, last_report_status: before.last_report_status, last_apply_status: before.last_apply_status },
    xmin,
  });
  const { at } = placed(deps, nodeId, 'runtime snapshot', snapshot.captured_at, now);
  if (at) {
    const bases = deps.seriesBases ?? (deps.seriesBases = new SeriesBases());
    // The archives ride on the series share's statement when it goes on what this process wrote (one statement for both);
    // otherwise, or when that statement failed, they are written on their own, and either failure is logged as before.
    const values = snapshotArchiveValues(snapshot);
    const archives = values && { values, written: false };
    void deps.background.run(
      (async () => {
        await afterwards(deps, nodeId, metadata, 'runtime snapshot: series rollups', () => addSnapshotToSeries(deps.pool, snapshot, at, bases, archives));
        if (archives && !archives.written)
          await afterwards(deps, nodeId, metadata, 'runtime snapshot: archives', () => archiveSnapshot(deps.pool, snapshot, at));
      })(),
    );
  }
  return verdict;
}

/**
 * True when `decide` records nothing on the node's recorded state as read in the
 * report's own transaction: only on a store whose inline projections commit with
 * the append (PostgreSQL), where a `node_status_current` row is the fold of the
 * whole stream at its version. Otherwise (no row, KurrentDB) the transitions are
 * decided through `appendTransitions`, which reads the stream's version first.
 * Race: a transition another process appends after this read is the same race as
 * that process appending just after this report's own decision.
 */
function nothingToRecord(deps: TelemetryDeps, recorded: BeforeSnapshot['recorded'], decide: (state: NodeStatusState) => NodeStatusEvent[]): boolean {
  if (!deps.store.transactional || recorded === undefined) return false;
  return decide({ health: recorded.health as NodeHealth, sessions: new Map(Object.entries(recorded.sessions)) }).length === 0;
}

/** Work after the answer: a failure is a gap in a graph, not a lie, so it is only logged. */
async function afterwards(deps: TelemetryDeps, nodeId: string, metadata: EventMetadata, what: string, work: () => Promise<unknown>): Promise<void> {
  try {
    await work();
  } catch (err) {
    deps.log.error({ err, node_id: nodeId, requestId: metadata.requestId }, `${what} failed`);
  }
}

/** A sample's place in time (domain/series/placement.ts); a clamped or dropped one is logged. */
function placed(deps: TelemetryDeps, nodeId: string, what: string, capturedAt: string, now: Date): Placement {
  const placement = placeSample(capturedAt, now);
  if (placement.clamped === 'ahead' || placement.clamped === 'expired') {
    deps.log.warn(
      { node_id: nodeId, captured_at: capturedAt, placement: placement.clamped },
      `${what}: captured_at ${placement.clamped === 'ahead' ? 'ahead of the server clock, placed now' : 'older than the retention, not stored in the series'}`,
    );
  }
  return placement;
}

/** Re-derives health from the stored inputs (after an apply or a reconciliation) and records a change. */
async function refreshHealth(deps: TelemetryDeps, nodeId: string, metadata: EventMetadata, now: Date): Promise<void> {
  const inputs = await nodeStatus(deps.pool, nodeId);
  if (inputs) await recordHealth(deps, nodeId, deriveHealth(inputs, now), metadata);
}

/** Appends the health transition when the verdict differs from the recorded health; answers the events appended. */
function recordHealth(deps: TelemetryDeps, nodeId: string, verdict: HealthVerdict, metadata: EventMetadata): Promise<NodeStatusEvent[]> {
  return appendTransitions(deps, nodeId, (state) => decideHealth(nodeId, state, verdict), metadata);
}

/** What the node's transitions recorded as of stream version `version`: its `node_status_current` row, and the events after it when it is behind. */
async function loadNodeStatus(deps: TelemetryDeps, nodeId: string, version: number): Promise<NodeStatusState> {
  return readModelAndTail(
    deps,
    nodeStatusStream(nodeId),
    version,
    await currentNodeStatus(deps.pool, nodeId),
    (tail, from) =>
      foldNodeStatus(
        tail.map((e) => ({ type: e.type, data: e.data }) as NodeStatusEvent),
        from?.state,
      ),
    'node-status',
  );
}

/**
 * Decides a node's next transitions from its recorded state and appends them in
 * one append expecting the stream at the version read before that state, through
 * `execute` (commands/handle.ts), which decides again on a conflict.
 * Race: two reports of one node decide on the same state; the second append finds
 * the stream moved and is decided again on the new state, so a transition is
 * never recorded twice. The version is read before the state: a state read later
 * is at least as new, and if it is newer the append fails and is retried.
 */
async function appendTransitions(
  deps: TelemetryDeps,
  nodeId: string,
  decide: (state: NodeStatusState) => NodeStatusEvent[],
  metadata: EventMetadata,
): Promise<NodeStatusEvent[]> {
  const streamId = nodeStatusStream(nodeId);
  const { result } = await execute(
    deps.store,
    [],
    async (_streams, more) => {
      const { version } = await more(streamId, 'version');
      const events = decide(await loadNodeStatus(deps, nodeId, version));
      return { writes: [{ streamId, events }], result: events };
    },
    metadata,
  );
  return result;
}

export async function recordReconciliation(deps: TelemetryDeps, report: ReconciliationReport, metadata: EventMetadata, now: Date): Promise<void> {
  await withTransaction(deps.pool, async (tx) => {
    await upsertReport(tx, report, now);
    await insertStatusEvent(
      tx,
      report.node_id,
      { kind: 'report', generation: report.generation, status: report.status, drift_count: report.drift_items.length, payload: report },
      now,
    );
  });
  const { at } = placed(deps, report.node_id, 'reconciliation report', report.captured_at, now);
  if (at)
    void deps.background.run(
      afterwards(deps, report.node_id, metadata, 'reconciliation report: series rollups', () =>
        addReportToSeries(deps.pool, report.node_id, report.status === 'failed', at),
      ),
    );
  await refreshHealth(deps, report.node_id, metadata, now);
}

export async function recordApply(deps: TelemetryDeps, apply: ApplyResult, metadata: EventMetadata, now: Date): Promise<void> {
  await withTransaction(deps.pool, async (tx) => {
    await upsertApply(tx, apply, now);
    await insertStatusEvent(tx, apply.node_id, { kind: 'apply', generation: apply.generation, status: apply.status, drift_count: null, payload: apply }, now);
    // No event records an apply: its failure is fanned out to the notification outbox with the row, in the same transaction.
    const failed = applyFailed(apply, now);
    if (failed) await fanOut(tx, failed, { floodLimit: deps.notifyFloodLimit ?? 20 });
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

/**
 * Replaces the node's prefix flap table, in one statement when this process wrote
 * the node's previous report (`KnownFlapReports`), in two when another instance
 * wrote it (the first reads it), else in one transaction;
 * returns how many entries it holds.
 */
export async function recordPrefixFlaps(deps: TelemetryDeps, flaps: PrefixFlaps, now: Date): Promise<number> {
  const knownFlaps = deps.knownFlaps ?? (deps.knownFlaps = new KnownFlapReports());
  let known = knownFlaps.take(flaps.node_id);
  let written: FlapWrite | undefined;
  // When another instance wrote the node's report since, once more on the report that statement saw.
  for (let tries = 0; known && !written && tries < 2; tries++) {
    const outcome = await replaceOverKnown(deps.pool, flaps, now, known);
    if (outcome && 'stale' in outcome) known = outcome.stale;
    else [written, known] = [outcome, undefined];
  }
  written ??= await withTransaction(deps.pool, (tx) => replacePrefixFlaps(tx, flaps, now));
  if (written.known) knownFlaps.set(flaps.node_id, written.known);
  return written.entries;
}

/** A 30 s sample, placed at its `captured_at` (bounded); one older than the retention is answered but not stored. */
export async function recordWireguardTraffic(deps: TelemetryDeps, sample: WireguardTraffic, now: Date): Promise<TrafficTotals> {
  const totals = trafficTotals(sample);
  // The sums are bigint columns and JSON numbers in the answer: beyond 2^53 they would be inexact, beyond 2^63 a database error (a 500).
  if (totals.rx_bytes > Number.MAX_SAFE_INTEGER || totals.tx_bytes > Number.MAX_SAFE_INTEGER) {
    throw new Validation('traffic sums out of range', [
      { loc: ['body', 'peers'], msg: `the sum of rx_bytes or tx_bytes over the peers exceeds ${Number.MAX_SAFE_INTEGER}`, type: 'number_range' },
    ]);
  }
  const { at } = placed(deps, sample.node_id, 'wireguard traffic', sample.captured_at, now);
  if (at) {
    const writes =
      deps.trafficWrites ??
      (deps.trafficWrites = new GroupCommit(
        (rows) => insertWireguardTrafficRows(deps.pool, rows),
        (r) => r.sample.node_id,
      ));
    await writes.add({ sample, totals, at });
  }
  return totals;
}

/** Nodes whose derived health moved without a report (a snapshot grew stale) get their transition recorded. */
export async function sweepHealth(deps: TelemetryDeps, now: Date): Promise<string[]> {
  const [inputs, recorded] = await Promise.all([allNodeStatus(deps.pool), recordedHealths(deps.pool)]);
  const changed: string[] = [];
  for (const [nodeId, row] of inputs) {
    const verdict = deriveHealth(row, now);
    // No row: nothing recorded (or the projection awaits its rebuild; appendTransitions then reads the stream).
    if (verdict.health === (recorded.get(nodeId) ?? 'unknown')) continue;
    const events = await recordHealth(deps, nodeId, verdict, { actor: 'telemetry-job', recordedAt: now.toISOString() });
    if (events.length > 0) changed.push(nodeId);
  }
  return changed;
}

export const TELEMETRY_JOB = 'telemetry-maintenance';
export const TELEMETRY_JOB_INTERVAL_MS = 60_000;

/** One round of the single-instance telemetry job: retention (60 days), compaction of closed hours, then the staleness sweep. */
export async function telemetryMaintenance(deps: TelemetryDeps, now: Date): Promise<{ deleted: Record<string, number>; stale: string[] }> {
  const deleted = await pruneTelemetry(deps.pool, now);
  await compactTelemetry(deps.pool, now);
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
