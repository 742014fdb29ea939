import { Unavailable } from '../../domain/errors.js';
import type { RoaSet } from '../../domain/rpki/roa.js';
import type { Config } from '../config.js';
import type { Logger } from '../logger.js';
import type { IdentityRecord, KeyCertRecord } from './queries.js';
import { SYNC_TIMEOUT_MS } from './sync.js';

/**
 * The registry replica as its clients see it (`REGISTRY_URL` +
 * `REGISTRY_SERVICE_TOKEN`): every call has a timeout, names are cached for a
 * short while, and a replica that is not configured or does not answer becomes
 * `RegistryUnavailable` (503) for explicit queries and `null` for name enrichment.
 */

export class RegistryUnavailable extends Unavailable {
  constructor(message = 'registry replica unavailable') {
    super(message);
  }
}

/** The replica answered a sync with one of its contract errors (409, 502): passed on as is. */
export class RegistryRefused extends Error {
  constructor(
    readonly status: number,
    readonly detail: string,
  ) {
    super(detail);
    this.name = 'RegistryRefused';
  }
}

export interface RegistryClientOptions {
  baseUrl?: string;
  token?: string;
  timeoutMs?: number;
  namesTtlMs?: number;
  log?: Logger;
  now?: () => number;
}

const NAMES_PER_CALL = 1000;
const CACHE_LIMIT = 20_000;

export class RegistryClient {
  private readonly names = new Map<number, { name: string | null; expires: number }>();
  private readonly timeoutMs: number;
  private readonly ttlMs: number;
  private readonly now: () => number;

  constructor(private readonly options: RegistryClientOptions) {
    this.timeoutMs = options.timeoutMs ?? 5000;
    this.ttlMs = options.namesTtlMs ?? 60_000;
    this.now = options.now ?? Date.now;
  }

  get configured(): boolean {
    return !!this.options.baseUrl && !!this.options.token;
  }

  /** One call; a 404 is `null`, other failures throw. */
  private async call<T>(method: 'GET' | 'POST', path: string, body?: unknown, timeoutMs = this.timeoutMs): Promise<T | null> {
    if (!this.configured) throw new RegistryUnavailable('registry replica is not configured');
    const url = `${this.options.baseUrl!.replace(/\/+$/, '')}/registry/v1${path}`;
    let res: Response;
    try {
      res = await fetch(url, {
        method,
        headers: { authorization: `Bearer ${this.options.token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (err) {
      this.options.log?.warn({ err, path }, 'registry replica unreachable');
      throw new RegistryUnavailable();
    }
    const payload = (await res.json().catch(() => null)) as (T & { detail?: unknown }) | null;
    if (res.ok) return payload;
    if (res.status === 404) return null;
    if ((res.status === 409 || res.status === 502) && typeof payload?.detail === 'string') throw new RegistryRefused(res.status, payload.detail);
    this.options.log?.warn({ path, status: res.status, detail: payload?.detail }, 'registry replica refused a call');
    throw new RegistryUnavailable();
  }

  status(): Promise<ReplicaStatus> {
    return this.call<ReplicaStatus>('GET', '/status') as Promise<ReplicaStatus>;
  }

  /** A sync can take the replica up to its 300 s bound. */
  sync(force: boolean): Promise<Record<string, unknown>> {
    return this.call<Record<string, unknown>>('POST', `/sync${force ? '?force=1' : ''}`, undefined, SYNC_TIMEOUT_MS + 10_000) as Promise<
      Record<string, unknown>
    >;
  }

  asn(asn: number): Promise<ReplicaAutNum | null> {
    return this.call('GET', `/asns/${asn}`);
  }

  /** `route` and `route6` prefixes the ASN originates; an unknown ASN has none. */
  async routes(asn: number): Promise<{ asn: number; route: string[]; route6: string[] }> {
    return (await this.call<{ asn: number; route: string[]; route6: string[] }>('GET', `/asns/${asn}/routes`)) ?? { asn, route: [], route6: [] };
  }

  verificationOptions(asn: number): Promise<Record<string, unknown> | null> {
    return this.call('GET', `/asns/${asn}/verification-options`);
  }

  mntner(name: string): Promise<Record<string, unknown> | null> {
    return this.call('GET', `/mntners/${encodeURIComponent(name)}`);
  }

  /** Claim enrichment of an ASN (as-name, maintainers, person, routes); an unknown ASN gives nulls and empty lists. */
  async identity(asn: number): Promise<ReplicaIdentity> {
    const found = await this.call<ReplicaIdentity>('GET', `/asns/${asn}/identity`);
    return found ?? { asn, as_name: null, mnt_by: [], person: null, name: null, email: null, route: [], route6: [] };
  }

  /**
   * `GET /roas`, conditional on `etag`: the set with its tag, `not_modified`, or
   * null when the replica has no set yet (404). Other failures throw
   * `RegistryUnavailable`.
   */
  async roaSet(etag?: string): Promise<{ etag: string; set: RoaSet } | 'not_modified' | null> {
    if (!this.configured) throw new RegistryUnavailable('registry replica is not configured');
    let res: Response;
    try {
      res = await fetch(`${this.options.baseUrl!.replace(/\/+$/, '')}/registry/v1/roas`, {
        headers: { authorization: `Bearer ${this.options.token}`, ...(etag ? { 'if-none-match': etag } : {}) },
        signal: AbortSignal.timeout(this.timeoutMs),
      });
      if (res.status === 304) return 'not_modified';
      if (res.status === 404) return null;
      const set = res.ok ? ((await res.json()) as RoaSet) : null;
      const tag = res.headers.get('etag');
      if (set && tag && Array.isArray(set.roas)) return { etag: tag, set };
      this.options.log?.warn({ status: res.status }, 'registry replica refused the ROA set');
    } catch (err) {
      this.options.log?.warn({ err }, 'registry replica unreachable (ROA set)');
    }
    throw new RegistryUnavailable();
  }

  /** The key-cert object of a 40-hex PGP fingerprint (`armor` is its `certif:` lines), or null. */
  keyCert(fingerprint: string): Promise<ReplicaKeyCert | null> {
    return this.call('GET', `/key-certs/${encodeURIComponent(fingerprint)}`);
  }

  /**
   * as-names of `asns` (unknown ones left out). Answers, negative ones included,
   * are cached for `namesTtlMs`; only the misses go to the replica, 1000 a call.
   */
  async lookupNames(asns: readonly number[]): Promise<Map<number, string>> {
    const now = this.now();
    const out = new Map<number, string>();
    const missing: number[] = [];
    for (const asn of new Set(asns)) {
      const hit = this.names.get(asn);
      if (hit && hit.expires > now) {
        if (hit.name !== null) out.set(asn, hit.name);
      } else missing.push(asn);
    }
    for (let i = 0; i < missing.length; i += NAMES_PER_CALL) {
      const chunk = missing.slice(i, i + NAMES_PER_CALL);
      const answer = (await this.call<{ names: Record<string, string> }>('POST', '/names', { asns: chunk }))?.names ?? {};
      if (this.names.size + chunk.length > CACHE_LIMIT) this.names.clear();
      for (const asn of chunk) {
        const name = answer[String(asn)] ?? null;
        this.names.set(asn, { name, expires: now + this.ttlMs });
        if (name !== null) out.set(asn, name);
      }
    }
    return out;
  }
}

export interface ReplicaStatus {
  enabled: boolean;
  commit: string | null;
  asn_count: number;
  synced_at: string | null;
  counts: Record<string, number>;
}

/** `GET /registry/v1/key-certs/{fingerprint}`: the replica's own record, as it sends it. */
export type ReplicaKeyCert = KeyCertRecord;

/** `GET /registry/v1/asns/{asn}/identity`: the replica's own record, as it sends it. */
export type ReplicaIdentity = IdentityRecord;

export interface ReplicaAutNum {
  asn: number;
  as_name: string | null;
  mnt_by: string[];
  updated_at: string;
}

const clients = new WeakMap<Config, RegistryClient>();

/** The client of a configuration; one per configuration, so its name cache is shared by its callers. */
export function registryClient(config: Config, log?: Logger): RegistryClient {
  let client = clients.get(config);
  if (!client) {
    client = new RegistryClient({ baseUrl: config.registryUrl, token: config.registryServiceToken, log });
    clients.set(config, client);
  }
  return client;
}

/**
 * Name enrichment (peering `remote_as_name`, origin names): the as-names the
 * replica knows, or `null` when it is not configured or does not answer, so the
 * caller applies its own fallback (null, or the placeholder `AS<asn>`).
 */
export async function asNames(config: Config, asns: readonly number[], log?: Logger): Promise<ReadonlyMap<number, string> | null> {
  const client = registryClient(config, log);
  if (!client.configured) return null;
  try {
    return await client.lookupNames(asns);
  } catch (err) {
    if (err instanceof RegistryUnavailable) return null;
    throw err;
  }
}
