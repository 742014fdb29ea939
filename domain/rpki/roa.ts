import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { Type, type Static } from '@sinclair/typebox';
import { sha256Hex } from '../sha256.js';
import { canonicalPrefix, formatIp, parsePrefix } from '../net/ip.js';

/**
 * Route Origin Authorisations of the dn42 registry, as the replica derives them
 * from its `route`/`route6` objects and the control server hands them to the
 * agents. dn42 has no RPKI repository: the registry is the source, and the
 * ROA set is what operators load into BIRD's `roa4`/`roa6` tables.
 */

/** RPKI states of a route (RFC 6811), as the routing-table report writes them. */
export type RpkiState = 'valid' | 'invalid' | 'not_found';

export const RoaSchema = Type.Object(
  {
    prefix: Type.String({ minLength: 9, maxLength: 43, description: 'canonical prefix: network address, RFC 5952 for IPv6' }),
    max_length: Type.Integer({ minimum: 0, maximum: 128, description: 'longest prefix the ROA authorises; at least the prefix length' }),
    asn: Type.Integer({ minimum: 0, maximum: 4294967295, description: 'the authorised origin AS; AS0 authorises nobody (RFC 6483)' }),
  },
  { additionalProperties: false },
);
export type Roa = Static<typeof RoaSchema>;

// ajv-formats ships CommonJS; its default export arrives wrapped under ESM.
const addFormats = ((addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ?? addFormatsModule) as unknown as (ajv: Ajv) => Ajv;

/** The most ROAs one set may hold (the dn42 registry has a few thousand route objects). */
export const MAX_ROAS = 100_000;

/** `GET /registry/v1/roas` and `GET /control/v1/agent/roas`: one registry commit's ROAs. */
export const RoaSetSchema = Type.Object(
  {
    commit: Type.String({ minLength: 1, maxLength: 64, description: 'the registry commit the ROAs come from' }),
    synced_at: Type.String({ format: 'date-time', description: 'when the replica loaded that commit' }),
    roas: Type.Array(RoaSchema, { maxItems: MAX_ROAS, description: 'sorted by prefix (IPv4 first), then max_length, then asn' }),
  },
  { additionalProperties: false },
);
export type RoaSet = Static<typeof RoaSetSchema>;

const checkRoaSet = addFormats(new Ajv({ strict: true })).compile<RoaSet>(RoaSetSchema);

/** Whether `value` is a ROA set whose every prefix is a canonical prefix and whose max_length fits it (what an agent loads into BIRD). */
export function isRoaSet(value: unknown): value is RoaSet {
  if (!checkRoaSet(value)) return false;
  return value.roas.every((r) => {
    const parsed = parsePrefix(r.prefix);
    return parsed !== null && canonicalPrefix(r.prefix) === r.prefix && r.max_length >= parsed[1] && r.max_length <= (parsed[0].kind() === 'ipv4' ? 32 : 128);
  });
}

/**
 * The entity tag of a ROA set: a hash of its ROAs alone, so two answers with the
 * same ROAs (a registry commit that changed no route object, the replica and the
 * control server) carry the same tag and a client's `If-None-Match` holds.
 */
export function roaSetEtag(roas: readonly Roa[]): string {
  return `"roas-${sha256Hex(JSON.stringify(roas.map((r) => [r.prefix, r.max_length, r.asn]))).slice(0, 32)}"`;
}

/** One `route`/`route6` object as the replica loads it: the prefix as written, its origins and its `max-length:` value, if any. */
export interface RouteObject {
  prefix: string;
  origins: readonly number[];
  /** The first `max-length:` value as written; null when the object has none. */
  maxLength: string | null;
}

/**
 * The ROAs of route objects: one per origin, `max_length` the object's
 * `max-length:` or, without one, the prefix length (RFC 6482). An object whose
 * prefix has host bits set, or whose max-length is not a whole number between
 * the prefix length and the family's width, yields no ROA (skipped, counted):
 * a wrong ROA would reject routes its owner meant to authorise. Sorted and
 * without duplicates.
 */
export function roasOf(objects: Iterable<RouteObject>): { roas: Roa[]; skipped: number } {
  const seen = new Map<string, Roa>();
  let skipped = 0;
  for (const object of objects) {
    const parsed = parsePrefix(object.prefix);
    const canonical = canonicalPrefix(object.prefix);
    const width = parsed?.[0].kind() === 'ipv4' ? 32 : 128;
    const length = parsed?.[1] ?? -1;
    const maxLength = object.maxLength === null ? length : /^\d{1,3}$/.test(object.maxLength.trim()) ? Number(object.maxLength.trim()) : -1;
    const hostBits = parsed !== null && canonical !== `${formatIp(parsed[0])}/${length}`;
    if (!parsed || canonical === null || hostBits || maxLength < length || maxLength > width || object.origins.length === 0) {
      skipped += 1;
      continue;
    }
    for (const asn of object.origins) seen.set(`${canonical} ${maxLength} ${asn}`, { prefix: canonical, max_length: maxLength, asn });
  }
  return { roas: sortRoas([...seen.values()]), skipped };
}

/** IPv4 before IPv6, then by network address, prefix length, max_length and asn; each prefix parsed once. */
export function sortRoas(roas: readonly Roa[]): Roa[] {
  const keyed = roas.map((roa) => {
    const [network, length] = networkOf(roa.prefix);
    return { roa, family: network.family, bits: network.bits, length };
  });
  keyed.sort(
    (a, b) =>
      a.family - b.family ||
      (a.bits < b.bits ? -1 : a.bits > b.bits ? 1 : 0) ||
      a.length - b.length ||
      a.roa.max_length - b.roa.max_length ||
      a.roa.asn - b.roa.asn,
  );
  return keyed.map((k) => k.roa);
}

interface Network {
  family: 4 | 6;
  bits: bigint;
}

/** A prefix as (family, address as an integer) and length; the text must be a valid prefix. */
function networkOf(prefix: string): [Network, number] {
  const parsed = parsePrefix(prefix);
  if (!parsed) throw new Error(`not a prefix: ${prefix}`);
  const [ip, length] = parsed;
  let bits = 0n;
  for (const byte of ip.toByteArray()) bits = (bits << 8n) | BigInt(byte);
  return [{ family: ip.kind() === 'ipv4' ? 4 : 6, bits }, length];
}

const widthOf = (family: 4 | 6) => (family === 4 ? 32 : 128);
const maskTo = (bits: bigint, family: 4 | 6, length: number): bigint => {
  const host = BigInt(widthOf(family) - length);
  return (bits >> host) << host;
};

/**
 * RFC 6811 origin validation over one ROA set. A ROA covers a route when its
 * prefix contains the route's prefix; the route is `valid` when a covering ROA
 * names its origin AS (not AS0) and allows its length (`max_length`),
 * `invalid` when ROAs cover it but none does (a length beyond every matching
 * max_length included), `not_found` when none covers it. This is what BIRD's
 * `roa_check()` answers for the same table, computed here so that one
 * `birdc show route all` gives every route's state.
 */
export class RoaIndex {
  /** ROAs by family, then by `<length>/<network>`. */
  private readonly byNetwork = new Map<string, Roa[]>();
  /** The prefix lengths ROAs of each family use, ascending: a lookup tries only these. */
  private readonly lengths: Record<4 | 6, number[]> = { 4: [], 6: [] };

  constructor(roas: Iterable<Roa>) {
    const lengths = { 4: new Set<number>(), 6: new Set<number>() };
    for (const roa of roas) {
      const [network, length] = networkOf(roa.prefix);
      const key = `${network.family}:${length}/${network.bits.toString(16)}`;
      const list = this.byNetwork.get(key);
      if (list) list.push(roa);
      else this.byNetwork.set(key, [roa]);
      lengths[network.family].add(length);
    }
    this.lengths = { 4: [...lengths[4]].sort((a, b) => a - b), 6: [...lengths[6]].sort((a, b) => a - b) };
  }

  /** The state of a route to `prefix` originated by `originAsn` (null: no single origin, say an AS_SET). */
  state(prefix: string, originAsn: number | null): RpkiState {
    let parsed: [Network, number];
    try {
      parsed = networkOf(prefix);
    } catch {
      return 'not_found';
    }
    const [network, length] = parsed;
    let covered = false;
    for (const roaLength of this.lengths[network.family]) {
      if (roaLength > length) break;
      const candidates = this.byNetwork.get(`${network.family}:${roaLength}/${maskTo(network.bits, network.family, roaLength).toString(16)}`);
      if (!candidates) continue;
      covered = true;
      if (originAsn !== null && candidates.some((r) => r.asn !== 0 && r.asn === originAsn && length <= r.max_length)) return 'valid';
    }
    return covered ? 'invalid' : 'not_found';
  }
}
