import type pg from 'pg';
import type { AutNum, Contact, Mntner } from '../../domain/registry/objects.js';
import { verificationOptions, type VerificationOption } from '../../domain/registry/options.js';
import { sortRoas, type Roa } from '../../domain/rpki/roa.js';
import { withTransaction, type Queryable } from '../db/pool.js';
import { readState } from './store.js';

/**
 * The read side of the replica. An answer that reads several tables reads them in
 * one REPEATABLE READ snapshot: a sync committing between two of its statements
 * would otherwise mix the old commit with the new one.
 */
export function inSnapshot<T>(pool: pg.Pool, work: (db: Queryable) => Promise<T>): Promise<T> {
  return withTransaction(
    pool,
    async (tx) => {
      await tx.query('SET TRANSACTION READ ONLY');
      return work(tx);
    },
    'REPEATABLE READ',
  );
}

export interface StatusRecord {
  commit: string | null;
  previous_commit: string | null;
  counts: Record<string, number>;
  asn_count: number;
  synced_at: string | null;
  checked_at: string | null;
  duration_ms: number | null;
}

export async function status(db: Queryable): Promise<StatusRecord> {
  const state = await readState(db);
  return {
    commit: state?.commit ?? null,
    previous_commit: state?.previousCommit ?? null,
    counts: state?.counts ?? {},
    asn_count: state?.counts['aut-num'] ?? 0,
    synced_at: state?.syncedAt.toISOString() ?? null,
    checked_at: state?.checkedAt.toISOString() ?? null,
    duration_ms: state?.durationMs ?? null,
  };
}

/** as-names of the given ASNs; unknown and nameless ones are left out. One statement. */
export async function names(db: Queryable, asns: readonly number[]): Promise<Record<string, string>> {
  const { rows } = await db.query(`SELECT asn::text AS asn, as_name FROM registry_aut_nums WHERE asn = ANY($1::bigint[]) AND as_name IS NOT NULL`, [asns]);
  const out: Record<string, string> = {};
  for (const row of rows) out[row.asn] = row.as_name;
  return out;
}

export interface AutNumRecord {
  asn: number;
  as_name: string | null;
  descr: string | null;
  mnt_by: string[];
  admin_c: string[];
  tech_c: string[];
  org: string | null;
  /** When the commit this record comes from was loaded. */
  updated_at: string;
}

export interface MntnerRecord {
  mntner: string;
  descr: string | null;
  mnt_by: string[];
  admin_c: string[];
  tech_c: string[];
  auth: string[];
  /** Aut-nums that list this maintainer in `mnt-by`. */
  asns: number[];
  updated_at: string;
}

async function syncedAt(db: Queryable): Promise<string> {
  return (await readState(db))?.syncedAt.toISOString() ?? new Date(0).toISOString();
}

async function loadAutNum(db: Queryable, asn: number): Promise<AutNum | null> {
  const { rows } = await db.query('SELECT * FROM registry_aut_nums WHERE asn = $1', [asn]);
  const r = rows[0];
  return r ? { asn: Number(r.asn), asName: r.as_name, descr: r.descr, mntBy: r.mnt_by, adminC: r.admin_c, techC: r.tech_c, org: r.org } : null;
}

/** Mntner objects of the given names, in the given order; names without an object are left out. */
async function loadMntners(db: Queryable, names: readonly string[]): Promise<Mntner[]> {
  const { rows } = await db.query('SELECT * FROM registry_mntners WHERE name = ANY($1::text[])', [names]);
  const byName = new Map(
    rows.map((r) => [r.name as string, { name: r.name, descr: r.descr, mntBy: r.mnt_by, adminC: r.admin_c, techC: r.tech_c, auth: r.auth } satisfies Mntner]),
  );
  return names.flatMap((n) => byName.get(n) ?? []);
}

async function loadContacts(db: Queryable, handles: readonly string[]): Promise<Map<string, Contact>> {
  const { rows } = await db.query('SELECT handle, kind, name, emails FROM registry_contacts WHERE handle = ANY($1::text[])', [handles]);
  return new Map(rows.map((r) => [r.handle as string, r as Contact]));
}

export async function autNum(db: Queryable, asn: number): Promise<AutNumRecord | null> {
  const a = await loadAutNum(db, asn);
  if (!a) return null;
  return { asn: a.asn, as_name: a.asName, descr: a.descr, mnt_by: a.mntBy, admin_c: a.adminC, tech_c: a.techC, org: a.org, updated_at: await syncedAt(db) };
}

export async function mntner(db: Queryable, name: string): Promise<MntnerRecord | null> {
  const [m] = await loadMntners(db, [name.toUpperCase()]);
  return m ? mntnerRecord(db, m) : null;
}

/** A loaded mntner object with the aut-nums that name it. */
async function mntnerRecord(db: Queryable, m: Mntner): Promise<MntnerRecord> {
  const { rows } = await db.query('SELECT asn FROM registry_aut_nums WHERE mnt_by @> ARRAY[$1]::text[] ORDER BY asn', [m.name]);
  return {
    mntner: m.name,
    descr: m.descr,
    mnt_by: m.mntBy,
    admin_c: m.adminC,
    tech_c: m.techC,
    auth: m.auth,
    asns: rows.map((r) => Number(r.asn)),
    updated_at: await syncedAt(db),
  };
}

/** The maintainers of an ASN that have mntner objects, in `mnt-by` order; null for an unknown ASN. */
export async function asnMntners(db: Queryable, asn: number): Promise<MntnerRecord[] | null> {
  const a = await loadAutNum(db, asn);
  if (!a) return null;
  const out: MntnerRecord[] = [];
  for (const m of await loadMntners(db, a.mntBy)) out.push(await mntnerRecord(db, m));
  return out;
}

export interface OptionsRecord {
  asn: number;
  as_name: string | null;
  mntners: string[];
  options: VerificationOption[];
}

export async function options(db: Queryable, asn: number): Promise<OptionsRecord | null> {
  const a = await loadAutNum(db, asn);
  if (!a) return null;
  const mntners = await loadMntners(db, a.mntBy);
  const { rows } = await db.query(
    'SELECT id, mntner, kind, method, value, comment, hardware_key FROM registry_auth_options WHERE mntner = ANY($1::text[]) ORDER BY ordinal',
    [mntners.map((m) => m.name)],
  );
  const auth = new Map<string, VerificationOption[]>();
  for (const row of rows as VerificationOption[]) (auth.get(row.mntner) ?? auth.set(row.mntner, []).get(row.mntner)!).push(row);
  const handles = [...new Set([...a.adminC, ...a.techC, ...mntners.flatMap((m) => [...m.adminC, ...m.techC])])];
  const contacts = await loadContacts(db, handles);
  return { asn, as_name: a.asName, mntners: mntners.map((m) => m.name), options: verificationOptions(a, mntners, auth, contacts) };
}

export interface RoutesRecord {
  asn: number;
  route: string[];
  route6: string[];
}

/** Prefixes an ASN originates; an unknown ASN has empty lists. */
export async function routes(db: Queryable, asn: number): Promise<RoutesRecord> {
  const { rows } = await db.query('SELECT family, prefix::text AS prefix FROM registry_routes WHERE origin = $1 ORDER BY family, prefix', [asn]);
  return { asn, route: rows.filter((r) => r.family === 4).map((r) => r.prefix), route6: rows.filter((r) => r.family === 6).map((r) => r.prefix) };
}

export interface IdentityRecord {
  asn: number;
  as_name: string | null;
  mnt_by: string[];
  /** The handle of the first `admin-c` (then `tech-c`) of the aut-num that is a person. */
  person: string | null;
  name: string | null;
  email: string | null;
  route: string[];
  route6: string[];
}

/** Claim enrichment: each field falls back to null or empty on its own, an unknown ASN included. */
export async function identity(db: Queryable, asn: number): Promise<IdentityRecord> {
  const a = await loadAutNum(db, asn);
  const handles = a ? [...new Set([...a.adminC, ...a.techC])] : [];
  const contacts = await loadContacts(db, handles);
  const person = handles.map((h) => contacts.get(h)).find((c) => c?.kind === 'person') ?? null;
  const r = await routes(db, asn);
  return {
    asn,
    as_name: a?.asName ?? null,
    mnt_by: a?.mntBy ?? [],
    person: person?.handle ?? null,
    name: person?.name ?? null,
    email: person?.emails[0] ?? null,
    route: r.route,
    route6: r.route6,
  };
}

export interface KeyCertRecord {
  key_cert: string;
  fingerprint: string;
  method: string | null;
  owner: string[];
  mnt_by: string[];
  /** The ASCII-armored public key. */
  armor: string;
}

export async function keyCert(db: Queryable, fingerprint: string): Promise<KeyCertRecord | null> {
  const { rows } = await db.query('SELECT * FROM registry_key_certs WHERE fingerprint = $1 ORDER BY name LIMIT 1', [fingerprint]);
  const r = rows[0];
  return r ? { key_cert: r.name, fingerprint: r.fingerprint, method: r.method, owner: r.owner, mnt_by: r.mnt_by, armor: r.armor } : null;
}

/** The loaded ROA set's commit, load time and entity tag; null before a load that derived ROAs. */
export interface RoaSetHead {
  commit: string;
  synced_at: string;
  etag: string;
}

export async function roaSetHead(db: Queryable): Promise<RoaSetHead | null> {
  const { rows } = await db.query(`SELECT commit, synced_at, roas_etag FROM registry_state WHERE load_format >= 2 AND roas_etag IS NOT NULL`);
  const row = rows[0];
  return row ? { commit: row.commit, synced_at: (row.synced_at as Date).toISOString(), etag: row.roas_etag } : null;
}

/** The loaded ROA set in `sortRoas` order (the order its tag was computed over), with its head; null before such a load. */
export async function roaSet(pool: pg.Pool): Promise<{ head: RoaSetHead; roas: Roa[] } | null> {
  return inSnapshot(pool, async (db) => {
    const head = await roaSetHead(db);
    if (!head) return null;
    const { rows } = await db.query('SELECT prefix, max_length, origin FROM registry_roas');
    const roas = sortRoas(rows.map((r) => ({ prefix: r.prefix as string, max_length: Number(r.max_length), asn: Number(r.origin) })));
    return { head, roas };
  });
}
