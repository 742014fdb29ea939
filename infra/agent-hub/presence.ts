import { fileURLToPath } from 'node:url';
import type { MigrationSet } from '../db/migrate.js';
import type { Queryable } from '../db/pool.js';
import type { Logger } from '../logger.js';

/** Presence rows, doorbell payload spill-over and update offers (applied with the other state migrations). */
export const agentHubMigrations: MigrationSet = { name: 'agent-hub', dir: fileURLToPath(new URL('./migrations', import.meta.url)) };

/** How often an instance refreshes its heartbeat, and after how long without one its connections stop counting. */
export const PRESENCE = { heartbeat_ms: 10_000, expiry_seconds: 30 } as const;

/**
 * Live instances, by the database clock: presence compares heartbeats written by
 * different instances, whose own clocks may disagree (and tests move the service clock).
 */
const LIVE = `SELECT instance_id FROM agent_hub_instances WHERE heartbeat_at > now() - make_interval(secs => ${PRESENCE.expiry_seconds})`;

/** Agent connections of the node on every server instance (the permanent `WS /agent/ws/{node_id}` channel). */
export async function onlineAgentCount(db: Queryable, nodeId: string): Promise<number> {
  const { rows } = await db.query(`SELECT count(*)::int AS n FROM agent_connections WHERE node_id = $1 AND instance_id IN (${LIVE})`, [nodeId]);
  return rows[0].n;
}

/** Nodes with at least one agent connected to a live instance. */
export async function connectedNodes(db: Queryable): Promise<string[]> {
  const { rows } = await db.query(`SELECT DISTINCT node_id FROM agent_connections WHERE instance_id IN (${LIVE}) ORDER BY node_id`);
  return rows.map((r: { node_id: string }) => r.node_id);
}

/** Connections of the nodes on live instances other than `instanceId`, by node (absent: none). */
export async function remoteAgentCounts(db: Queryable, nodeIds: readonly string[], instanceId: string): Promise<Map<string, number>> {
  const { rows } = await db.query(
    `SELECT node_id, count(*)::int AS n FROM agent_connections
      WHERE node_id = ANY($1) AND instance_id <> $2 AND instance_id IN (${LIVE}) GROUP BY node_id`,
    [nodeIds, instanceId],
  );
  return new Map(rows.map((r: { node_id: string; n: number }) => [r.node_id, r.n]));
}

/**
 * This instance's presence: one instance row kept fresh by a heartbeat, and one
 * row per open agent connection. Rows of instances whose heartbeat expired are
 * swept by whichever instance beats next.
 */
export class Presence {
  private readonly connections = new Map<string, string>();
  private timer: NodeJS.Timeout | undefined;
  private beating: Promise<void> | undefined;

  constructor(
    private readonly db: Queryable,
    readonly instanceId: string,
    private readonly log: Logger,
  ) {}

  /**
   * Beats once, then every `heartbeat_ms`. A database that is down does not keep
   * the server from starting: the failure is logged and the next beat retries
   * (until then this instance's agents do not count as online anywhere).
   */
  async start(): Promise<void> {
    const tick = () =>
      (this.beating ??= this.beat()
        .catch((err) => this.log.error({ err, instance: this.instanceId }, 'agent presence heartbeat failed'))
        .finally(() => (this.beating = undefined)));
    await tick();
    this.timer = setInterval(tick, PRESENCE.heartbeat_ms);
    this.timer.unref();
  }

  /** Records an open connection; resolves once other instances can see it. */
  async add(connectionId: string, nodeId: string): Promise<void> {
    this.connections.set(connectionId, nodeId);
    await this.db.query(`INSERT INTO agent_connections (connection_id, instance_id, node_id) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`, [
      connectionId,
      this.instanceId,
      nodeId,
    ]);
  }

  async remove(connectionId: string): Promise<void> {
    this.connections.delete(connectionId);
    await this.db.query(`DELETE FROM agent_connections WHERE connection_id = $1`, [connectionId]);
  }

  /** Removes this instance and its connections (clean shutdown). */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.beating;
    this.connections.clear();
    try {
      await this.db.query(`DELETE FROM agent_hub_instances WHERE instance_id = $1`, [this.instanceId]);
    } catch (err) {
      // The rows expire on their own after `expiry_seconds`; shutdown goes on.
      this.log.warn({ err, instance: this.instanceId }, 'could not remove agent presence rows at shutdown');
    }
  }

  /**
   * Refreshes the heartbeat. Race: after a pause longer than the expiry (a stalled
   * event loop, a lost database) another instance may have swept this one; the
   * upsert then re-creates the row and the connections still open are re-inserted.
   */
  private async beat(): Promise<void> {
    const { rows } = await this.db.query(
      `INSERT INTO agent_hub_instances (instance_id) VALUES ($1)
       ON CONFLICT (instance_id) DO UPDATE SET heartbeat_at = now() RETURNING (xmax = 0) AS inserted`,
      [this.instanceId],
    );
    if (rows[0].inserted && this.connections.size > 0) {
      const ids = [...this.connections.keys()];
      await this.db.query(
        `INSERT INTO agent_connections (connection_id, instance_id, node_id)
         SELECT c, $1, n FROM unnest($2::uuid[], $3::text[]) AS t(c, n) ON CONFLICT DO NOTHING`,
        [this.instanceId, ids, [...this.connections.values()]],
      );
      // Race: a connection removed while this insert ran may have had its DELETE run first.
      const gone = ids.filter((id) => !this.connections.has(id));
      if (gone.length > 0) await this.db.query(`DELETE FROM agent_connections WHERE connection_id = ANY($1::uuid[])`, [gone]);
    }
    await this.db.query(`DELETE FROM agent_hub_instances WHERE heartbeat_at < now() - make_interval(secs => ${PRESENCE.expiry_seconds * 2})`);
  }
}
