import type pg from 'pg';
import { decideAlerts, evolveOpenAlerts, FLAP_ALERTS_STREAM, keyString, unionNodes, type FlapAlertEvent, type OpenAlerts } from '../domain/flaps/alerts.js';
import { flapCounts, prefixReadings, sessionReadings } from '../domain/flaps/readings.js';
import { sessionKind } from '../domain/flaps/session.js';
import { scheduleSingleton, type SingletonJob } from '../infra/db/singleton.js';
import type { EventStore } from '../infra/eventstore/types.js';
import type { Logger } from '../infra/logger.js';
import { sampleFlapRate } from '../infra/telemetry/flap-rate.js';
import { fleetPrefixFlaps } from '../infra/telemetry/prefix-flaps.js';
import { allBgpProtocols } from '../infra/telemetry/store.js';
import { scoreOpenFlapAlerts } from '../infra/telemetry/flap-alert-scores.js';
import { openFlapAlerts } from '../projections/flap-alerts/queries.js';
import { listNodes } from '../projections/fleet/queries.js';
import { sessionFlapRecords } from '../projections/session-flaps/queries.js';
import { execute } from './handle.js';
import { readModelAndTail } from './read-model-tail.js';

export interface FlapAlertDeps {
  pool: pg.Pool;
  store: EventStore;
  log: Logger;
}

export const FLAP_ALERT_JOB = 'flap-alerts';
export const FLAP_ALERT_JOB_INTERVAL_MS = 60_000;

export interface Evaluation {
  opened: number;
  resolved: number;
  open: number;
}

/**
 * One evaluation (the single-instance job about every 60 s): the fleet's
 * session and prefix scores now, from active nodes only; openings and
 * resolutions appended to the `flap-alerts` stream in one append; then the
 * scores of the alerts still open written to the job's own table
 * (`flap_alert_scores`; `flap_alerts` is its projection's), and the minute's
 * point-in-time flap counts to the flap-rate archive.
 */
export async function evaluateFlapAlerts(deps: FlapAlertDeps, now: Date): Promise<Evaluation> {
  const [records, prefixes, nodes, protocols] = await Promise.all([
    sessionFlapRecords(deps.pool, null),
    fleetPrefixFlaps(deps.pool),
    listNodes(deps.pool),
    allBgpProtocols(deps.pool),
  ]);
  // A decommissioned node runs the empty state and a deleted one is gone: their alerts resolve (`source_gone`).
  const active = new Set(nodes.filter((n) => n.lifecycle !== 'decommissioned').map((n) => n.node_id));
  const sessions = sessionReadings(
    [...records.values()].flatMap((m) => [...m.values()]).filter((r) => active.has(r.node_id)),
    now,
    (nodeId, session) => {
      const p = protocols.get(nodeId)?.find((x) => x.name === session);
      return p && sessionKind(session) === 'ebgp' ? (p.remote_asn ?? null) : null;
    },
  );
  const directions = prefixReadings(
    prefixes.rows.filter((r) => active.has(r.node_id)),
    now,
  );
  const readings = [...sessions, ...directions];
  const { result } = await execute(
    deps.store,
    [],
    async (_streams, more) => {
      const { version } = await more(FLAP_ALERTS_STREAM, 'version');
      const open = await loadOpenAlerts(deps, version);
      const events = decideAlerts(open, readings, now);
      let after = open;
      events.forEach((e, i) => (after = evolveOpenAlerts(after, e, version + 1 + i)));
      return { writes: [{ streamId: FLAP_ALERTS_STREAM, events }], result: { events, after } };
    },
    { actor: 'flap-alert-job', recordedAt: now.toISOString() },
  );
  const byKey = new Map(readings.map((r) => [keyString(r.key), r]));
  const scores = [...result.after.values()].flatMap((a) => {
    const reading = byKey.get(keyString(a.key));
    return reading ? [{ alert_id: a.alert_id, score: reading.score, nodes: unionNodes(a.nodes, reading.nodes) }] : [];
  });
  await scoreOpenFlapAlerts(
    deps.pool,
    [...result.after.values()].map((a) => a.alert_id),
    scores,
    now,
  );
  await sampleFlapRate(deps.pool, now, { ...flapCounts(sessions, directions), open_alerts: result.after.size });
  const count = (type: FlapAlertEvent['type']) => result.events.filter((e) => e.type === type).length;
  return { opened: count('FlapAlertOpened'), resolved: count('FlapAlertResolved'), open: result.after.size };
}

/** The open alerts as of stream version `version`: the read model, and the events after it when it is behind. */
async function loadOpenAlerts(deps: FlapAlertDeps, version: number): Promise<OpenAlerts> {
  const model = await openFlapAlerts(deps.pool);
  return readModelAndTail(
    deps,
    FLAP_ALERTS_STREAM,
    version,
    { state: model.open, version: model.version },
    (tail, from) => tail.reduce((state, e) => evolveOpenAlerts(state, { type: e.type, data: e.data } as FlapAlertEvent, e.version), from?.state ?? new Map()),
    'flap-alerts',
  );
}

/** Starts the alert job: about every minute one instance (advisory lock) runs `evaluateFlapAlerts`. */
export function startFlapAlertJob(deps: FlapAlertDeps, now: () => Date, intervalMs = FLAP_ALERT_JOB_INTERVAL_MS): SingletonJob {
  return scheduleSingleton(
    deps.pool,
    FLAP_ALERT_JOB,
    intervalMs,
    async () => {
      const { opened, resolved, open } = await evaluateFlapAlerts(deps, now());
      if (opened > 0 || resolved > 0) deps.log.info({ opened, resolved, open }, 'flap alerts');
    },
    deps.log,
  );
}
