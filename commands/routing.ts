import type { RoutingTable } from '../domain/telemetry/reports.js';
import { withTransaction, type Pool } from '../infra/db/pool.js';
import { primaryOf } from '../infra/db/read-pool.js';
import type { Logger } from '../infra/logger.js';
import { NO_FLEET_ROUTING, refreshFleetRouting, storedFleetRouting, type FleetRouting } from '../infra/telemetry/routing-fleet.js';
import { changedPositions, churnBetween, hashTable, KnownTables, type KnownTable } from '../infra/telemetry/known-tables.js';
import { churnAgainstLatest, forgetNodeRouting, latestTableCapture, lockNodeRouting, storeOverKnown, storeRoutingTable } from '../infra/telemetry/routing.js';
import { summarizeRoutes } from '../domain/telemetry/routing.js';
import { listNodes } from '../projections/fleet/queries.js';
import type { TelemetryDeps } from './telemetry.js';

/**
 * Stores a routing table: the observation with its summary and its churn against
 * the node's previous table, the routes as rows (one transaction, under the
 * node's routing lock); then the fleet's union is refreshed. A failed refresh is
 * only logged: the fleet trend misses a point, the table is stored.
 * When the node's stored table is the one this process wrote last (`KnownTables`),
 * the churn and the changed rows are found here and only those rows are sent, in
 * one statement that checks it is still stored; otherwise PostgreSQL compares the
 * whole table with the stored rows.
 */
export async function recordRoutingTable(deps: TelemetryDeps, table: RoutingTable, now: Date): Promise<number> {
  const knownTables = deps.knownTables ?? (deps.knownTables = new KnownTables());
  const hashes = hashTable(table);
  const before = knownTables.take(table.node_id);
  /** The table against the one this process stored last, if that is the stored one. */
  const againstKnown = (known: KnownTable) => {
    const churn = churnBetween(known.prefixes, hashes.prefixes);
    const seqs = changedPositions(known.routes, hashes.routes);
    // The same routes give the same summary: not counted again.
    const same = seqs.length === 0 && known.routes.length === hashes.routes.length && known.rpkiObserved === table.rpki_observed;
    return { churn, seqs, summaryJson: same ? known.summaryJson : JSON.stringify(summarizeRoutes(table)) };
  };
  // One statement when the stored table is still the one this process wrote; else (or when it is not) one transaction, compared in SQL.
  const quick = before && againstKnown(before);
  const quickId = quick && (await storeOverKnown(deps.pool, table, now, quick.churn, quick.summaryJson, quick.seqs, before.observationId));
  const { id, summaryJson } = quickId
    ? { id: quickId, summaryJson: quick.summaryJson }
    : await withTransaction(deps.pool, async (tx) => {
        await lockNodeRouting(tx, table.node_id);
        const summaryJson = JSON.stringify(summarizeRoutes(table));
        return { id: await storeRoutingTable(tx, table, now, await churnAgainstLatest(tx, table), summaryJson), summaryJson };
      });
  knownTables.set(table.node_id, { observationId: id, ...hashes, rpkiObserved: table.rpki_observed, summaryJson });
  try {
    await fleetRefresh(deps.pool).request(table.captured_at, now);
  } catch (err) {
    deps.log.error({ err, node_id: table.node_id }, 'fleet routing view not refreshed');
  }
  return id;
}

/**
 * The fleet's routing view as of the latest refresh. When none is stored but
 * tables are (a database migrated to 0010 with tables in it, or one whose
 * refreshes retention pruned after 60 days without a table), it is computed
 * once here, so the fleet views never show zeros for a fleet with tables.
 */
export async function fleetRouting(pool: Pool, now: Date): Promise<FleetRouting> {
  const stored = await storedFleetRouting(pool);
  if (stored) return stored;
  const captured = await latestTableCapture(pool);
  if (captured === null) return NO_FLEET_ROUTING;
  // Read through a replica's pool (a view), the lazy refresh is a write: the primary makes it and answers it.
  const primary = primaryOf(pool);
  await fleetRefresh(primary).request(captured, now);
  return (await storedFleetRouting(primary)) ?? NO_FLEET_ROUTING;
}

export type NodeLifecycleChange = 'decommissioned' | 'recommissioned' | 'deleted';

/**
 * After a node left the fleet or came back: a deleted node's latest table and
 * route rows go, and the fleet's union is recomputed over the nodes it counts
 * now (placed at `now`), instead of keeping the node until the next table
 * arrives. The node write has happened: a failed refresh is only logged.
 */
export async function nodeLifecycleRouting(deps: { pool: Pool; log: Logger }, nodeId: string, change: NodeLifecycleChange, now: Date): Promise<void> {
  try {
    if (change === 'deleted') await withTransaction(deps.pool, (tx) => forgetNodeRouting(tx, nodeId));
    await fleetRefresh(deps.pool).request(now.toISOString(), now);
  } catch (err) {
    deps.log.error({ err, node_id: nodeId, change }, 'fleet routing view not refreshed');
  }
}

/**
 * Fleet refreshes in one process share runs: a table that arrives while a refresh
 * runs waits for the next one (which starts after the running one and sees its
 * routes), and every table arriving meanwhile joins that same next run. Fifty
 * nodes reporting together cost two refreshes, not fifty.
 */
class FleetRefresh {
  private running: Promise<void> | null = null;
  private next: { promise: Promise<void>; at: string; now: Date } | null = null;

  constructor(private readonly pool: Pool) {}

  request(at: string, now: Date): Promise<void> {
    if (!this.running) return this.start(at, now);
    if (this.next) {
      // The joined run is stamped with the latest capture time and clock among its tables.
      if (Date.parse(at) > Date.parse(this.next.at)) this.next.at = at;
      if (now > this.next.now) this.next.now = now;
      return this.next.promise;
    }
    const next = { at, now, promise: Promise.resolve() };
    next.promise = this.running
      .catch(() => {})
      .then(() => {
        this.next = null;
        return this.start(next.at, next.now);
      });
    this.next = next;
    return next.promise;
  }

  private start(at: string, now: Date): Promise<void> {
    const run = (async () => {
      // A decommissioned node runs the empty state: its last table is not the fleet's routing.
      const nodes = (await listNodes(this.pool)).filter((n) => n.lifecycle !== 'decommissioned').map((n) => n.node_id);
      await refreshFleetRouting(this.pool, nodes, at, now);
    })();
    this.running = run;
    const clear = () => {
      if (this.running === run) this.running = null;
    };
    run.then(clear, clear);
    return run;
  }
}

const refreshes = new WeakMap<Pool, FleetRefresh>();

function fleetRefresh(pool: Pool): FleetRefresh {
  let refresh = refreshes.get(pool);
  if (!refresh) refreshes.set(pool, (refresh = new FleetRefresh(pool)));
  return refresh;
}
