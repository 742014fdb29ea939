import type { Queryable } from '../../infra/db/pool.js';

/** The read side of agent tokens, enrollment tokens and registrations, in the contract's shapes. */

const iso = (t: Date | string | null): string | null => (t === null ? null : new Date(t).toISOString());

/** AgentTokenOut as listed: `token` is the non-secret token id. */
export interface AgentTokenOut {
  token: string;
  node_id: string;
  agent_id: string | null;
  issued_at: string;
  expires_at: string | null;
  revoked_at: string | null;
}

/** A token row as resolution needs it. */
export interface AgentTokenRow {
  token_id: string;
  node_id: string;
  agent_id: string | null;
  secret_sha256: string;
  expires_at: Date | null;
  revoked_at: Date | null;
}

/** Agent token rows by id, many in one read (prepared once per connection: every agent request runs it); the hash comparison and the expiry check are the caller's. */
export async function findAgentTokens(db: Queryable, tokenIds: readonly string[]): Promise<Map<string, AgentTokenRow>> {
  const { rows } = await db.query<AgentTokenRow>({
    name: 'agent-tokens',
    text: `SELECT token_id, node_id, agent_id, secret_sha256, expires_at, revoked_at FROM agent_tokens WHERE token_id = ANY($1::text[])`,
    values: [tokenIds],
  });
  return new Map(rows.map((r) => [r.token_id, r]));
}

export async function listAgentTokens(db: Queryable, nodeId: string): Promise<AgentTokenOut[]> {
  const { rows } = await db.query(`SELECT * FROM agent_tokens WHERE node_id = $1 ORDER BY issued_at, tx, pos`, [nodeId]);
  return rows.map((r) => ({
    token: r.token_id,
    node_id: r.node_id,
    agent_id: r.agent_id,
    issued_at: iso(r.issued_at)!,
    expires_at: iso(r.expires_at),
    revoked_at: iso(r.revoked_at),
  }));
}

/** EnrollmentTokenCreated without `secret`: what the list shows. */
export interface EnrollmentTokenOut {
  token_id: string;
  node_id: string | null;
  description: string | null;
  expires_at: string | null;
  used_at: string | null;
  created_at: string;
}

function enrollmentOut(r: Record<string, any>): EnrollmentTokenOut {
  return {
    token_id: r.token_id,
    node_id: r.node_id,
    description: r.description,
    expires_at: iso(r.expires_at),
    used_at: iso(r.used_at),
    created_at: iso(r.created_at)!,
  };
}

export async function listEnrollmentTokens(db: Queryable): Promise<EnrollmentTokenOut[]> {
  const { rows } = await db.query(`SELECT * FROM enrollment_tokens ORDER BY created_at, tx, pos`);
  return rows.map(enrollmentOut);
}

export async function getEnrollmentToken(db: Queryable, tokenId: string): Promise<(EnrollmentTokenOut & { secret_sha256: string }) | undefined> {
  const { rows } = await db.query(`SELECT * FROM enrollment_tokens WHERE token_id = $1`, [tokenId]);
  return rows[0] ? { ...enrollmentOut(rows[0]), secret_sha256: rows[0].secret_sha256 } : undefined;
}

/** A registration record (the contract does not show its fields; docs/decisions.md lists them). */
export interface RegistrationOut {
  registration_id: string;
  node_id: string;
  status: 'pending' | 'approved' | 'rejected';
  hostname: string | null;
  inventory: Record<string, unknown> | null;
  via: string | null;
  enrollment_token_id: string | null;
  client_address: string | null;
  requests: number;
  first_seen_at: string;
  last_seen_at: string;
  decided_at: string | null;
  decided_by: string | null;
  note: string | null;
  agent_id: string | null;
  agent_token_id: string | null;
  accepted_at: string | null;
}

function registrationOut(r: Record<string, any>): RegistrationOut {
  return {
    registration_id: r.registration_id,
    node_id: r.node_id,
    status: r.status,
    hostname: r.hostname,
    inventory: r.inventory,
    via: r.via,
    enrollment_token_id: r.enrollment_token_id,
    client_address: r.client_address,
    requests: r.requests,
    first_seen_at: iso(r.first_seen_at)!,
    last_seen_at: iso(r.last_seen_at)!,
    decided_at: iso(r.decided_at),
    decided_by: r.decided_by,
    note: r.note,
    agent_id: r.agent_id,
    agent_token_id: r.agent_token_id,
    accepted_at: iso(r.accepted_at),
  };
}

/** Oldest first, optionally of one status. */
export async function listRegistrations(db: Queryable, status?: string): Promise<RegistrationOut[]> {
  const { rows } = await db.query(`SELECT * FROM registrations WHERE ($1::text IS NULL OR status = $1) ORDER BY first_seen_at, tx, pos`, [status ?? null]);
  return rows.map(registrationOut);
}

export async function getRegistration(db: Queryable, registrationId: string): Promise<RegistrationOut | undefined> {
  const { rows } = await db.query(`SELECT * FROM registrations WHERE registration_id = $1`, [registrationId]);
  return rows[0] ? registrationOut(rows[0]) : undefined;
}
