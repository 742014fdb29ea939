import type { RoutingTable } from '../../domain/telemetry/reports.js';
import { PerNode } from './per-node.js';
import type { Churn } from './routing.js';

/**
 * What this process wrote as each node's latest routing table (issue 30: a table
 * compared with the previous one without sending 1,500 rows to PostgreSQL to
 * compare there). Per node: the observation id the table was stored with, a
 * 53-bit hash of every route by position and the distinct prefixes' hashes,
 * about 16 bytes a route (24 MB for 1,000 nodes of 1,500 routes), and the
 * summary's JSON. It is used only while the node's stored table is still that
 * observation (read under the node's routing lock): a table stored by another
 * instance, or a node forgotten since, is compared in SQL as without it.
 */
export interface KnownTable {
  observationId: number;
  routes: Float64Array;
  /** Distinct, ascending. */
  prefixes: Float64Array;
  rpkiObserved: boolean;
  summaryJson: string;
}

export class KnownTables extends PerNode<KnownTable> {}

/** A table's route and prefix hashes (`KnownTable` without what storing it gives). */
export function hashTable(table: RoutingTable): { routes: Float64Array; prefixes: Float64Array } {
  const routes = new Float64Array(table.routes.length);
  const prefixes = new Float64Array(table.routes.length);
  const h = new Hash53();
  table.routes.forEach((r, i) => {
    h.reset().text(r.prefix);
    prefixes[i] = h.value();
    h.text(r.protocol)
      .num(r.origin_asn ?? -1)
      .num(r.as_path.length);
    for (const asn of r.as_path) h.num(asn);
    routes[i] = h
      .text(r.rpki ?? '')
      .num(r.local ? 1 : 0)
      .value();
  });
  prefixes.sort();
  let n = 0;
  for (let i = 0; i < prefixes.length; i++) if (i === 0 || prefixes[i] !== prefixes[n - 1]) prefixes[n++] = prefixes[i];
  return { routes, prefixes: prefixes.slice(0, n) };
}

/** Positions (1-based) where `next` differs from `known`, or that `known` does not have. */
export function changedPositions(known: Float64Array, next: Float64Array): number[] {
  const out: number[] = [];
  for (let i = 0; i < next.length; i++) if (i >= known.length || known[i] !== next[i]) out.push(i + 1);
  return out;
}

/** Prefixes announced (in `next` only) and withdrawn (in `known` only), both distinct and ascending. */
export function churnBetween(known: Float64Array, next: Float64Array): Churn {
  let i = 0;
  let j = 0;
  let both = 0;
  while (i < known.length && j < next.length) {
    if (known[i] === next[j]) {
      both++;
      i++;
      j++;
    } else if (known[i] < next[j]) i++;
    else j++;
  }
  return { announced: next.length - both, withdrawn: known.length - both };
}

/**
 * A 53-bit hash of a sequence of strings and numbers (two 32-bit FNV-1a lanes with
 * different primes, finished with murmur3's mixer); each string ends with a
 * separator, so field boundaries count. 53 bits: a collision among the few changed
 * routes of a fleet's tables (one would leave a changed row unwritten) is about
 * one in 10^15 per comparison.
 */
class Hash53 {
  private a = 0;
  private b = 0;

  reset(): this {
    this.a = 0x811c9dc5;
    this.b = 0x9747b28c;
    return this;
  }

  text(s: string): this {
    let a = this.a;
    let b = this.b;
    for (let i = 0; i < s.length; i++) {
      const c = s.charCodeAt(i);
      a = Math.imul(a ^ c, 0x01000193);
      b = Math.imul(b ^ c, 0x5bd1e995);
    }
    this.a = Math.imul(a ^ 0xffff, 0x01000193);
    this.b = Math.imul(b ^ 0xffff, 0x5bd1e995);
    return this;
  }

  /** An integer of up to 53 bits (ASNs are up to 2^32 - 1), or -1. */
  num(n: number): this {
    const low = n >>> 0;
    const high = Math.floor(n / 4294967296) >>> 0;
    this.a = Math.imul(Math.imul(this.a ^ low, 0x01000193) ^ high, 0x01000193);
    this.b = Math.imul(Math.imul(this.b ^ low, 0x5bd1e995) ^ high, 0x5bd1e995);
    return this;
  }

  value(): number {
    return (fmix(this.a) >>> 11) * 4294967296 + (fmix(this.b ^ 0x2545f491) >>> 0);
  }
}

function fmix(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return h ^ (h >>> 16);
}
