import { counterIncrease } from '../telemetry/rates.js';

/**
 * Current WireGuard rates from each node's latest two light traffic samples
 * (`wireguard_traffic_latest`): per peer, and per node as the sum of its peers.
 * Pure: the loader reads the samples, these functions divide.
 */
export interface PeerCounters {
  interface: string;
  public_key?: string | null;
  rx_bytes: number;
  tx_bytes: number;
}

export interface CounterSample {
  at: string;
  peers: readonly PeerCounters[];
}

export interface LatestSamples {
  latest: CounterSample;
  previous: CounterSample | null;
}

/** Rates null: the peer is not in the previous sample (new), or there is no previous sample. */
export interface PeerRate extends Rates {
  interface: string;
  public_key: string | null;
  /** A counter went down between the samples (the interface restarted): counted from zero. */
  reset: boolean;
}

/** Rates: the sum over the peers with a rate; null with fewer than two samples. */
export interface NodeRate extends Rates {
  /** Time of the latest sample; null without one. */
  sampled_at: string | null;
  /** Seconds between the two samples the rates come from; null with fewer than two. */
  interval_seconds: number | null;
  peers: PeerRate[];
}

const peerKey = (p: PeerCounters) => `${p.interface}\u0000${p.public_key ?? ''}`;

/** Rounded to 0.01 B/s: the console shows rates, not fractions of a byte. */
export const roundRate = (x: number): number => Math.round(x * 100) / 100;

export interface Rates {
  rx_bytes_per_sec: number | null;
  tx_bytes_per_sec: number | null;
}

/** Sums of rates; null when none of the rows has one (nothing measured is not zero). */
export function sumRates(rows: readonly Rates[]): Rates {
  const measured = rows.filter((r) => r.rx_bytes_per_sec !== null);
  if (measured.length === 0) return { rx_bytes_per_sec: null, tx_bytes_per_sec: null };
  return {
    rx_bytes_per_sec: roundRate(measured.reduce((s, r) => s + (r.rx_bytes_per_sec ?? 0), 0)),
    tx_bytes_per_sec: roundRate(measured.reduce((s, r) => s + (r.tx_bytes_per_sec ?? 0), 0)),
  };
}

/**
 * Rates older than this are not current: the agent sends a sample every 30 s, so
 * a latest sample this old means it stopped (the liveness `stale` bound, 300 s).
 */
export const CURRENT_RATE_MAX_AGE_SECONDS = 300;

/** A node's current rates at `now`; null rates with fewer than two samples or a latest one older than `CURRENT_RATE_MAX_AGE_SECONDS`. */
export function nodeRate(samples: LatestSamples | undefined, now: Date): NodeRate {
  if (!samples) return { sampled_at: null, interval_seconds: null, rx_bytes_per_sec: null, tx_bytes_per_sec: null, peers: [] };
  const { latest, previous } = samples;
  const current = now.getTime() - Date.parse(latest.at) <= CURRENT_RATE_MAX_AGE_SECONDS * 1000;
  const seconds = previous && current ? (Date.parse(latest.at) - Date.parse(previous.at)) / 1000 : 0;
  const before = new Map((previous?.peers ?? []).map((p) => [peerKey(p), p]));
  const peers = latest.peers.map((p): PeerRate => {
    const was = before.get(peerKey(p));
    const publicKey = p.public_key ?? null;
    if (!was || !(seconds > 0)) return { interface: p.interface, public_key: publicKey, rx_bytes_per_sec: null, tx_bytes_per_sec: null, reset: false };
    return {
      interface: p.interface,
      public_key: publicKey,
      rx_bytes_per_sec: roundRate(counterIncrease(was.rx_bytes, p.rx_bytes) / seconds),
      tx_bytes_per_sec: roundRate(counterIncrease(was.tx_bytes, p.tx_bytes) / seconds),
      reset: p.rx_bytes < was.rx_bytes || p.tx_bytes < was.tx_bytes,
    };
  });
  if (!(seconds > 0)) return { sampled_at: latest.at, interval_seconds: null, rx_bytes_per_sec: null, tx_bytes_per_sec: null, peers };
  // Peers new in the latest sample have no rate yet; the node's rate is that of the others (0 when none).
  const sums = sumRates(peers);
  return {
    sampled_at: latest.at,
    interval_seconds: seconds,
    rx_bytes_per_sec: sums.rx_bytes_per_sec ?? 0,
    tx_bytes_per_sec: sums.tx_bytes_per_sec ?? 0,
    peers,
  };
}
