import { fileURLToPath } from 'node:url';
import type { DesiredStatePublished } from '../../domain/desired-state/events.js';
import { NODE_EVENT_TYPES, type NodeEvent } from '../../domain/node/events.js';
import type { RecordedEvent, TransactionContext } from '../../infra/eventstore/types.js';
import { unreachable } from '../../domain/decider.js';
import { eventTime, type Projection } from '../runtime/projection.js';
import { jsonBatch, jsonbAt } from '../../infra/db/json-batch.js';

type FleetEvent = NodeEvent | DesiredStatePublished;

/**
 * Nodes, peerings, interfaces, BGP sessions, generations and node history, written
 * in the append's transaction so that a response reads its own write.
 */
export const fleetProjection: Projection = {
  name: 'fleet',
  mode: 'inline',
  handles: [...NODE_EVENT_TYPES, 'DesiredStatePublished'],
  tables: ['node_history', 'generations', 'bgp_sessions', 'interfaces', 'peerings', 'nodes'],
  migrations: { name: 'fleet', dir: fileURLToPath(new URL('./migrations', import.meta.url)) },
  async apply(tx, recorded) {
    const event = { type: recorded.type, data: recorded.data } as FleetEvent;
    await applyFleetEvent(tx, event, recorded);
    await recordHistory(tx, event, recorded);
  },
  /**
   * The same rows as `apply` one by one, with each run of publications (a DNS
   * group or fleet-wide write publishes hundreds in one append), of node updates
   * of distinct nodes and of session updates of distinct sessions (a peer AS
   * disable) written by one statement each, and the history by one: a
   * fleet-wide write on 1,000 nodes made some 5,000 round trips inside its
   * transaction.
   */
  async applyBatch(tx, events) {
    let run: { type: string; events: RecordedEvent[]; keys: Set<string> } | undefined;
    const flush = async () => {
      if (run) await BATCHED[run.type].write(tx, run.events);
      run = undefined;
    };
    for (const recorded of events) {
      const batched = BATCHED[recorded.type];
      if (!batched) {
        await flush();
        await applyFleetEvent(tx, { type: recorded.type, data: recorded.data } as FleetEvent, recorded);
        continue;
      }
      const key = batched.key?.(recorded);
      const runType = batched.run ?? recorded.type;
      if (run && (run.type !== runType || (key !== undefined && run.keys.has(key)))) await flush();
      run ??= { type: runType, events: [], keys: new Set() };
      run.events.push(recorded);
      if (key !== undefined) run.keys.add(key);
    }
    await flush();
    await historyBatch(tx, events);
  },
};

/**
 * Event types whose runs `applyBatch` writes in one statement. With `key`, a run
 * holds each key once (a second event of the same row starts a new run, so rows
 * change in event order).
 */
interface Batched {
  key?: (e: RecordedEvent) => string;
  /** Types sharing a run name are batched together (their runs interleave: a peering, its interface, its session). */
  run?: string;
  write: (tx: TransactionContext, events: readonly RecordedEvent[]) => Promise<void>;
}
const CREATES = 'creates';
const createsBatch: Batched = { run: CREATES, write: createBatch };
const BATCHED: Record<string, Batched> = {
  DesiredStatePublished: { write: publishBatch },
  NodeUpdated: { key: (e) => (e.data as { node_id: string }).node_id, write: updateBatch },
  BgpSessionUpdated: { key: (e) => String((e.data as { session_id: number }).session_id), write: sessionUpdateBatch },
  // Created rows have new keys, and the tables have no foreign keys: a run of them is inserted table by table.
  NodeCreated: { ...createsBatch, key: (e) => (e.data as { node_id: string }).node_id },
  PeeringCreated: createsBatch,
  InterfaceCreated: createsBatch,
  BgpSessionCreated: createsBatch,
  [CREATES]: createsBatch,
};

/**
 * A run of `NodeCreated`, `PeeringCreated`, `InterfaceCreated` and
 * `BgpSessionCreated` (creating a node with its peerings, a provisioned
 * peering) as `apply` writes them: one INSERT per table, then each node's
 * `updated_at` set to its last event's time, as the touches in order leave it.
 * A node created twice in one run (deleted between) cannot happen: the delete
 * is not batched and ends the run, and `key` splits repeated creates.
 */
async function createBatch(tx: TransactionContext, events: readonly RecordedEvent[]): Promise<void> {
  const of = <T extends FleetEvent['type']>(type: T) =>
    events.filter((e) => e.type === type).map((e) => ({ d: e.data as Extract<FleetEvent, { type: T }>['data'], at: eventTime(e) }));
  const nodes = of('NodeCreated');
  if (nodes.length > 0) {
    // A node id can be created again after a delete; its generation numbers continue.
    await tx.query(
      `INSERT INTO nodes (node_id, fields, lifecycle, current_generation, created_at, updated_at)
       SELECT u.id, u.fields, 'active', coalesce((SELECT max(g.generation) FROM generations g WHERE g.node_id = u.id), 0), u.at, u.at
       FROM unnest($1::text[], $2::jsonb[], $3::timestamptz[]) AS u(id, fields, at)`,
      [nodes.map((n) => n.d.node_id), nodes.map((n) => JSON.stringify(n.d.fields)), nodes.map((n) => n.at)],
    );
  }
  const peerings = of('PeeringCreated');
  if (peerings.length > 0) {
    const p = peerings.map((r) => ({ ...r.d.peering, node_id: r.d.node_id, at: r.at }));
    await tx.query(
      `INSERT INTO peerings (id, node_id, name, remote_asn, remote_node_id, remote_label, is_internal, enabled, notes, created_at, updated_at)
       SELECT u.*, u.at FROM unnest($1::int[], $2::text[], $3::text[], $4::bigint[], $5::text[], $6::text[], $7::bool[], $8::bool[], $9::text[], $10::timestamptz[])
         AS u(id, node_id, name, remote_asn, remote_node_id, remote_label, is_internal, enabled, notes, at)`,
      [
        p.map((x) => x.id),
        p.map((x) => x.node_id),
        p.map((x) => x.name),
        p.map((x) => x.remote_asn),
        p.map((x) => x.remote_node_id ?? null),
        p.map((x) => x.remote_label ?? null),
        p.map((x) => x.is_internal),
        p.map((x) => x.enabled),
        p.map((x) => x.notes ?? null),
        p.map((x) => x.at),
      ],
    );
  }
  const interfaces = of('InterfaceCreated');
  if (interfaces.length > 0) {
    const i = interfaces.map((r) => ({ ...r.d.interface, node_id: r.d.node_id }));
    await tx.query(
      `INSERT INTO interfaces (id, node_id, peering_id, name, kind, enabled, sort_order, spec)
       SELECT * FROM unnest($1::int[], $2::text[], $3::int[], $4::text[], $5::text[], $6::bool[], $7::int[], $8::jsonb[])`,
      [
        i.map((x) => x.id),
        i.map((x) => x.node_id),
        i.map((x) => x.peering_id ?? null),
        i.map((x) => x.spec.name),
        i.map((x) => x.spec.kind ?? 'wireguard'),
        i.map((x) => x.enabled),
        i.map((x) => x.sort_order),
        i.map((x) => JSON.stringify(x.spec)),
      ],
    );
  }
  const sessions = of('BgpSessionCreated');
  if (sessions.length > 0) {
    const s = sessions.map((r) => ({ ...r.d.session, node_id: r.d.node_id }));
    await tx.query(
      `INSERT INTO bgp_sessions (id, node_id, peering_id, name, remote_asn, enabled, sort_order, spec)
       SELECT * FROM unnest($1::int[], $2::text[], $3::int[], $4::text[], $5::bigint[], $6::bool[], $7::int[], $8::jsonb[])`,
      [
        s.map((x) => x.id),
        s.map((x) => x.node_id),
        s.map((x) => x.peering_id ?? null),
        s.map((x) => x.spec.name),
        s.map((x) => x.spec.remote_asn),
        s.map((x) => x.spec.enabled ?? true),
        s.map((x) => x.sort_order),
        s.map((x) => JSON.stringify(x.spec)),
      ],
    );
  }
  // Each touched node's last event time wins, as the touches in order leave it (a created node's own time included).
  const touched = new Map<string, Date>();
  for (const e of events) if (e.type !== 'NodeCreated') touched.set((e.data as { node_id: string }).node_id, eventTime(e));
  if (touched.size > 0)
    await tx.query(`UPDATE nodes n SET updated_at = u.at FROM unnest($1::text[], $2::timestamptz[]) AS u(id, at) WHERE n.node_id = u.id`, [
      [...touched.keys()],
      [...touched.values()],
    ]);
}

/**
 * `DesiredStatePublished` events as `apply` writes them, in two statements (at
 * most one per node and generation), three when states must be copied. A row
 * points at its event (`event_position`) instead of holding a second copy of
 * the state when the event is in this database's `events` table, found by its
 * position and id (the PostgreSQL event store: inline, and in a rebuild); else
 * (a KurrentDB log) the state is copied into the row. The copied states travel
 * as one bytea of JSON texts (`jsonBatch`), neither a jsonb[] literal whose
 * elements the driver would escape character by character nor one large JSON
 * array PostgreSQL would parse whole before splitting it.
 */
async function publishBatch(tx: TransactionContext, events: readonly RecordedEvent[]): Promise<void> {
  const rows = events.map((e) => ({ d: e.data as DesiredStatePublished['data'], e }));
  const { rows: pointed } = await tx.query(
    `INSERT INTO generations (node_id, generation, reason, rollback_of, actor, request_id, created_at, event_position)
     SELECT u.node_id, u.generation, u.reason, u.rollback_of, u.actor, u.request_id, u.created_at, u.pos
     FROM unnest($1::text[], $2::int[], $3::text[], $4::int[], $5::text[], $6::text[], $7::timestamptz[], $8::bigint[], $9::text[])
            AS u(node_id, generation, reason, rollback_of, actor, request_id, created_at, pos, id)
     WHERE EXISTS (SELECT 1 FROM events e WHERE e.position = u.pos AND e.event_id::text = u.id)
     RETURNING event_position`,
    [
      rows.map((r) => r.d.node_id),
      rows.map((r) => r.d.generation),
      rows.map((r) => r.d.reason),
      rows.map((r) => r.d.rollback_of ?? null),
      rows.map((r) => r.e.metadata.actor),
      rows.map((r) => r.e.metadata.requestId ?? null),
      rows.map((r) => eventTime(r.e)),
      rows.map((r) => r.e.position.pos.toString()),
      rows.map((r) => r.e.id),
    ],
  );
  if (pointed.length < rows.length) {
    const found = new Set(pointed.map((r: { event_position: string }) => r.event_position));
    const copied = rows.filter((r) => !found.has(r.e.position.pos.toString()));
    const states = jsonBatch(copied.map((r) => r.d.state));
    await tx.query(
      `INSERT INTO generations (node_id, generation, reason, state, rollback_of, actor, request_id, created_at)
       SELECT u.node_id, u.generation, u.reason, ${jsonbAt('$4::bytea', 'u.o', 'u.l')}, u.rollback_of, u.actor, u.request_id, u.created_at
       FROM unnest($1::text[], $2::int[], $3::text[], $5::int[], $6::text[], $7::text[], $8::timestamptz[], $9::int[], $10::int[])
              AS u(node_id, generation, reason, rollback_of, actor, request_id, created_at, o, l)`,
      [
        copied.map((r) => r.d.node_id),
        copied.map((r) => r.d.generation),
        copied.map((r) => r.d.reason),
        states.bytes,
        copied.map((r) => r.d.rollback_of ?? null),
        copied.map((r) => r.e.metadata.actor),
        copied.map((r) => r.e.metadata.requestId ?? null),
        copied.map((r) => eventTime(r.e)),
        states.offsets,
        states.lengths,
      ],
    );
  }
  // The last publication of a node wins, as applying them in order would leave it.
  const current = new Map(rows.map((r) => [r.d.node_id, r.d.generation]));
  await tx.query(`UPDATE nodes n SET current_generation = u.g FROM unnest($1::text[], $2::int[]) AS u(id, g) WHERE n.node_id = u.id`, [
    [...current.keys()],
    [...current.values()],
  ]);
}

/** `NodeUpdated` events of distinct nodes as `apply` writes them, in one statement. */
async function updateBatch(tx: TransactionContext, events: readonly RecordedEvent[]): Promise<void> {
  const data = events.map((e) => e.data as Extract<NodeEvent, { type: 'NodeUpdated' }>['data']);
  await tx.query(
    `UPDATE nodes n SET fields = n.fields || u.changes, updated_at = u.at FROM unnest($1::text[], $2::jsonb[], $3::timestamptz[]) AS u(id, changes, at) WHERE n.node_id = u.id`,
    [data.map((d) => d.node_id), data.map((d) => JSON.stringify(d.changes)), events.map(eventTime)],
  );
}

/** `BgpSessionUpdated` events of distinct sessions as `apply` writes them: one statement, and one to touch their nodes. */
async function sessionUpdateBatch(tx: TransactionContext, events: readonly RecordedEvent[]): Promise<void> {
  const data = events.map((e) => e.data as Extract<NodeEvent, { type: 'BgpSessionUpdated' }>['data']);
  await tx.query(
    `UPDATE bgp_sessions s SET
       spec = COALESCE(u.spec, s.spec), name = COALESCE(u.spec ->> 'name', s.name),
       remote_asn = COALESCE((u.spec ->> 'remote_asn')::bigint, s.remote_asn),
       enabled = CASE WHEN u.spec IS NULL THEN s.enabled ELSE COALESCE((u.spec ->> 'enabled')::boolean, true) END,
       sort_order = COALESCE(u.sort_order, s.sort_order),
       peering_id = CASE WHEN u.set_peering THEN u.peering_id ELSE s.peering_id END
     FROM unnest($1::int[], $2::jsonb[], $3::int[], $4::bool[], $5::int[]) AS u(id, spec, sort_order, set_peering, peering_id)
     WHERE s.id = u.id`,
    [
      data.map((d) => d.session_id),
      data.map((d) => (d.changes.spec ? JSON.stringify(d.changes.spec) : null)),
      data.map((d) => d.changes.sort_order ?? null),
      data.map((d) => d.changes.peering_id !== undefined),
      data.map((d) => d.changes.peering_id ?? null),
    ],
  );
  // Each node's last touch wins, as applying them in order would leave it.
  const touched = new Map(events.map((e, i) => [data[i].node_id, eventTime(e)]));
  await tx.query(`UPDATE nodes n SET updated_at = u.at FROM unnest($1::text[], $2::timestamptz[]) AS u(id, at) WHERE n.node_id = u.id`, [
    [...touched.keys()],
    [...touched.values()],
  ]);
}

/** `recordHistory` for every event, in one statement. */
async function historyBatch(tx: TransactionContext, events: readonly RecordedEvent[]): Promise<void> {
  if (events.length === 0) return;
  const data = events.map((e) => (e.type === 'DesiredStatePublished' ? { ...(e.data as object), state: undefined } : e.data));
  await tx.query(
    `INSERT INTO node_history (tx, pos, node_id, type, data, actor, request_id, recorded_at)
     SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::text[], $4::text[], $5::jsonb[], $6::text[], $7::text[], $8::timestamptz[])`,
    [
      events.map((e) => e.position.tx.toString()),
      events.map((e) => e.position.pos.toString()),
      events.map((e) => (e.data as { node_id: string }).node_id),
      events.map((e) => e.type),
      data.map((d) => JSON.stringify(d)),
      events.map((e) => e.metadata.actor),
      events.map((e) => e.metadata.requestId ?? null),
      events.map(eventTime),
    ],
  );
}

async function applyFleetEvent(tx: TransactionContext, event: FleetEvent, recorded: RecordedEvent): Promise<void> {
  const at = eventTime(recorded);
  const touch = (nodeId: string) => tx.query(`UPDATE nodes SET updated_at = $2 WHERE node_id = $1`, [nodeId, at]);
  switch (event.type) {
    case 'NodeCreated': {
      // A node id can be created again after a delete; its generation numbers continue.
      const { rows } = await tx.query(`SELECT max(generation) AS g FROM generations WHERE node_id = $1`, [event.data.node_id]);
      await tx.query(`INSERT INTO nodes (node_id, fields, lifecycle, current_generation, created_at, updated_at) VALUES ($1, $2, 'active', $3, $4, $4)`, [
        event.data.node_id,
        event.data.fields,
        rows[0]?.g ?? 0,
        at,
      ]);
      return;
    }
    case 'NodeUpdated':
      await tx.query(`UPDATE nodes SET fields = fields || $2::jsonb, updated_at = $3 WHERE node_id = $1`, [event.data.node_id, event.data.changes, at]);
      return;
    case 'NodeDecommissioned':
    case 'NodeRecommissioned':
      await tx.query(`UPDATE nodes SET lifecycle = $2, updated_at = $3 WHERE node_id = $1`, [
        event.data.node_id,
        event.type === 'NodeDecommissioned' ? 'decommissioned' : 'active',
        at,
      ]);
      return;
    case 'NodeDeleted':
      for (const table of ['bgp_sessions', 'interfaces', 'peerings', 'nodes']) {
        await tx.query(`DELETE FROM ${table} WHERE node_id = $1`, [event.data.node_id]);
      }
      return;
    case 'PeeringCreated': {
      const p = event.data.peering;
      await tx.query(
        `INSERT INTO peerings (id, node_id, name, remote_asn, remote_node_id, remote_label, is_internal, enabled, notes, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $10)`,
        [p.id, event.data.node_id, p.name, p.remote_asn, p.remote_node_id, p.remote_label, p.is_internal, p.enabled, p.notes, at],
      );
      await touch(event.data.node_id);
      return;
    }
    case 'PeeringUpdated': {
      const c = event.data.changes;
      const sets: string[] = [];
      const values: unknown[] = [event.data.peering_id, at];
      for (const column of ['name', 'remote_asn', 'remote_node_id', 'remote_label', 'is_internal', 'enabled', 'notes'] as const) {
        if (c[column] !== undefined) {
          values.push(c[column]);
          sets.push(`${column} = $${values.length}`);
        }
      }
      await tx.query(`UPDATE peerings SET ${[...sets, 'updated_at = $2'].join(', ')} WHERE id = $1`, values);
      await touch(event.data.node_id);
      return;
    }
    case 'PeeringDeleted':
      await tx.query(`DELETE FROM peerings WHERE id = $1`, [event.data.peering_id]);
      await touch(event.data.node_id);
      return;
    case 'InterfaceCreated': {
      const i = event.data.interface;
      await tx.query(`INSERT INTO interfaces (id, node_id, peering_id, name, kind, enabled, sort_order, spec) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`, [
        i.id,
        event.data.node_id,
        i.peering_id,
        i.spec.name,
        i.spec.kind ?? 'wireguard',
        i.enabled,
        i.sort_order,
        i.spec,
      ]);
      await touch(event.data.node_id);
      return;
    }
    case 'InterfaceUpdated': {
      const c = event.data.changes;
      await tx.query(
        `UPDATE interfaces SET
           spec = COALESCE($2::jsonb, spec), name = COALESCE($2::jsonb ->> 'name', name), kind = COALESCE($2::jsonb ->> 'kind', kind),
           enabled = COALESCE($3, enabled), sort_order = COALESCE($4, sort_order),
           peering_id = CASE WHEN $5 THEN $6 ELSE peering_id END
         WHERE id = $1`,
        [event.data.interface_id, c.spec ?? null, c.enabled ?? null, c.sort_order ?? null, c.peering_id !== undefined, c.peering_id ?? null],
      );
      await touch(event.data.node_id);
      return;
    }
    case 'InterfaceDeleted':
      await tx.query(`DELETE FROM interfaces WHERE id = $1`, [event.data.interface_id]);
      await touch(event.data.node_id);
      return;
    case 'BgpSessionCreated': {
      const s = event.data.session;
      await tx.query(
        `INSERT INTO bgp_sessions (id, node_id, peering_id, name, remote_asn, enabled, sort_order, spec) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
        [s.id, event.data.node_id, s.peering_id, s.spec.name, s.spec.remote_asn, s.spec.enabled ?? true, s.sort_order, s.spec],
      );
      await touch(event.data.node_id);
      return;
    }
    case 'BgpSessionUpdated': {
      const c = event.data.changes;
      await tx.query(
        `UPDATE bgp_sessions SET
           spec = COALESCE($2::jsonb, spec), name = COALESCE($2::jsonb ->> 'name', name),
           remote_asn = COALESCE(($2::jsonb ->> 'remote_asn')::bigint, remote_asn),
           enabled = CASE WHEN $2::jsonb IS NULL THEN enabled ELSE COALESCE(($2::jsonb ->> 'enabled')::boolean, true) END,
           sort_order = COALESCE($3, sort_order),
           peering_id = CASE WHEN $4 THEN $5 ELSE peering_id END
         WHERE id = $1`,
        [event.data.session_id, c.spec ?? null, c.sort_order ?? null, c.peering_id !== undefined, c.peering_id ?? null],
      );
      await touch(event.data.node_id);
      return;
    }
    case 'BgpSessionDeleted':
      await tx.query(`DELETE FROM bgp_sessions WHERE id = $1`, [event.data.session_id]);
      await touch(event.data.node_id);
      return;
    case 'WireguardKeyRegistered':
      await tx.query(`UPDATE nodes SET wireguard_public_key = $2, updated_at = $3 WHERE node_id = $1`, [event.data.node_id, event.data.public_key, at]);
      return;
    case 'WireguardKeyEscrowRefreshed':
      // The escrow stays in the node stream; the read model never serves it.
      return;
    case 'NodeDnsGroupAssigned':
      await tx.query(`UPDATE nodes SET dns_group_id = $2, updated_at = $3 WHERE node_id = $1`, [event.data.node_id, event.data.dns_group_id, at]);
      return;
    case 'AutopeeringPolicySet':
      // The `autopeering` projection keeps policies; the fleet only records the event in the node's history.
      return;
    case 'NodeInventoryReported':
      await tx.query(`UPDATE nodes SET fields = jsonb_set(fields, '{inventory}', $2::jsonb), updated_at = $3 WHERE node_id = $1`, [
        event.data.node_id,
        JSON.stringify(event.data.inventory),
        at,
      ]);
      return;
    case 'DesiredStatePublished':
      // The row points at the event when it is in `events` (see publishBatch).
      await publishBatch(tx, [recorded]);
      return;
    default:
      return unreachable(event);
  }
}

async function recordHistory(tx: TransactionContext, event: FleetEvent, recorded: RecordedEvent): Promise<void> {
  // The snapshot itself is in `generations`; history keeps what changed and why.
  const data = event.type === 'DesiredStatePublished' ? { ...event.data, state: undefined } : event.data;
  await tx.query(`INSERT INTO node_history (tx, pos, node_id, type, data, actor, request_id, recorded_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`, [
    recorded.position.tx.toString(),
    recorded.position.pos.toString(),
    event.data.node_id,
    event.type,
    JSON.stringify(data),
    recorded.metadata.actor,
    recorded.metadata.requestId ?? null,
    eventTime(recorded),
  ]);
}
