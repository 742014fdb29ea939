/**
 * Prefix flap scores (document 3, "Flap scores"): an exponentially decayed
 * count per (prefix, attributed peer AS). Each route change adds its weight
 * (1 for a change seen once) and the value halves every `halfLifeMs`
 * (10 minutes for prefixes), so a score is "changes in roughly the last
 * quarter of an hour", and a route that calms down drops out by itself.
 */
export const PREFIX_HALF_LIFE_MS = 10 * 60_000;
/** Entries sent per report (the schema allows 1,000; the console lists at most 500 rows). */
export const FLAP_TOP_N = 500;
/** A score below this is forgotten (one change, after about 66 minutes). */
export const FORGET_BELOW = 0.01;

/** One scored key as the prefix-flaps report carries it. */
export interface FlapScore {
  prefix: string;
  peer_asn: number | null;
  origin_asn: number | null;
  /** Decayed to the time asked for. */
  score: number;
  /** Changes counted since the key was first scored (not decayed). */
  flaps: number;
  /** Epoch milliseconds of the latest change. */
  last_flap_at: number;
  /** The path of the latest change (first hop after the local AS to the origin, prepends collapsed); null before one was given. */
  as_path: number[] | null;
  /** Announcements (a new or changed path) and withdrawals since `sinceReport` was last reset (weighted, not decayed). */
  announcements: number;
  withdrawals: number;
}

/** What a change was, for the counts since the previous report; a changed path is a (re-)announcement. */
export interface ChangeDetail {
  kind: 'announce' | 'withdraw' | 'change';
  as_path: number[];
}

interface Stored {
  prefix: string;
  peer_asn: number | null;
  origin_asn: number | null;
  score: number;
  /** When `score` was last brought up to date. */
  at: number;
  flaps: number;
  last_flap_at: number;
  as_path: number[] | null;
  announcements: number;
  withdrawals: number;
}

/** Pure bookkeeping: every time comes from the caller, so tests control the clock. */
export class DecayedScores {
  private readonly entries = new Map<string, Stored>();

  constructor(private readonly halfLifeMs = PREFIX_HALF_LIFE_MS) {}

  /** Adds `weight` changes at `at` to (prefix, peer_asn); `origin_asn` is remembered as the latest seen. */
  add(prefix: string, peer_asn: number | null, origin_asn: number | null, weight: number, at: number, detail?: ChangeDetail): void {
    const key = `${prefix} ${peer_asn ?? '-'}`;
    let found = this.entries.get(key);
    if (!found) {
      found = { prefix, peer_asn, origin_asn, score: weight, at, flaps: weight, last_flap_at: at, as_path: null, announcements: 0, withdrawals: 0 };
      this.entries.set(key, found);
    } else {
      found.score = this.decayed(found, at) + weight;
      found.at = Math.max(found.at, at);
      found.flaps += weight;
      found.origin_asn = origin_asn;
      found.last_flap_at = Math.max(found.last_flap_at, at);
    }
    if (!detail) return;
    found.as_path = detail.as_path;
    if (detail.kind === 'withdraw') found.withdrawals += weight;
    else found.announcements += weight;
  }

  /** A report went out: the counts since the previous report start again (for every key, listed or not). */
  resetSinceReport(): void {
    for (const e of this.entries.values()) e.announcements = e.withdrawals = 0;
  }

  /**
   * The `n` highest scores decayed to `now`, highest first (ties by prefix,
   * then peer AS). Entries that decayed below FORGET_BELOW are dropped for good.
   */
  top(now: number, n = FLAP_TOP_N): FlapScore[] {
    const live: FlapScore[] = [];
    for (const [key, e] of this.entries) {
      const score = this.decayed(e, now);
      if (score < FORGET_BELOW) this.entries.delete(key);
      else {
        const { prefix, peer_asn, origin_asn, flaps, last_flap_at, as_path, announcements, withdrawals } = e;
        live.push({ prefix, peer_asn, origin_asn, score, flaps, last_flap_at, as_path, announcements, withdrawals });
      }
    }
    return live.sort((a, b) => b.score - a.score || a.prefix.localeCompare(b.prefix) || (a.peer_asn ?? -1) - (b.peer_asn ?? -1)).slice(0, n);
  }

  /** Keys held (scored and not yet forgotten). */
  get size(): number {
    return this.entries.size;
  }

  /** `score · 2^(−Δt / half-life)`; a clock that went backwards does not grow a score. */
  private decayed(e: Stored, now: number): number {
    return e.score * Math.pow(2, -Math.max(0, now - e.at) / this.halfLifeMs);
  }
}
