import type { Queryable } from '../../infra/db/pool.js';

/** Read side of flap mitigations over the fleet read model. */

export interface DisabledSessionRow {
  id: number;
  node_id: string;
  name: string;
  remote_asn: number;
}

/** Every BGP session record whose spec has it disabled, by node id then id. */
export async function disabledSessions(db: Queryable): Promise<DisabledSessionRow[]> {
  const { rows } = await db.query<{ id: number; node_id: string; name: string; remote_asn: string }>(
    `SELECT id, node_id, name, remote_asn FROM bgp_sessions WHERE NOT enabled ORDER BY node_id, id`,
  );
  return rows.map((r) => ({ id: r.id, node_id: r.node_id, name: r.name, remote_asn: Number(r.remote_asn) }));
}

/** Every node's base template (empty object when it has none), by node id. */
export async function nodeTemplates(db: Queryable): Promise<{ node_id: string; base_template: Record<string, unknown> }[]> {
  const { rows } = await db.query<{ node_id: string; base_template: Record<string, unknown> | null }>(
    `SELECT node_id, fields -> 'base_template' AS base_template FROM nodes ORDER BY node_id`,
  );
  return rows.map((r) => ({ node_id: r.node_id, base_template: r.base_template ?? {} }));
}
