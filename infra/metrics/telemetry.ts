import type { Registry } from 'prom-client';
import type { SessionHealth, SessionKind } from '../../domain/flaps/session.js';
import type { Logger } from '../logger.js';
import { sampledGauge, type Sample } from './sampled.js';

const SESSION_HEALTHS: readonly SessionHealth[] = ['up', 'connecting', 'down', 'unknown'];

/** One BGP protocol of a node's latest runtime snapshot, as the console's session rows classify it. */
export interface SessionReading {
  node_id: string;
  kind: SessionKind;
  health: SessionHealth;
}

/**
 * `dn42_bgp_sessions{node_id,kind,health}`: the BGP sessions of each node's
 * latest runtime snapshot by health (up, connecting, down, unknown), as
 * `/ui/fleet/peering-issues` classifies them. Every health of a (node, kind)
 * that has sessions is present, 0 included, so a recovery reads 0, not absent.
 */
export function bgpSessionsGauge(registry: Registry, log: Logger, read: () => Promise<readonly SessionReading[]>): void {
  sampledGauge(registry, log, {
    name: 'dn42_bgp_sessions',
    help: "BGP sessions of each node's latest runtime snapshot by kind (ebgp, ibgp) and health (up, connecting, down, unknown)",
    labelNames: ['node_id', 'kind', 'health'],
    read: async () => {
      const counts = new Map<string, Map<SessionHealth, number>>();
      for (const s of await read()) {
        const key = JSON.stringify([s.node_id, s.kind]);
        let byHealth = counts.get(key);
        if (!byHealth) counts.set(key, (byHealth = new Map(SESSION_HEALTHS.map((h) => [h, 0]))));
        byHealth.set(s.health, byHealth.get(s.health)! + 1);
      }
      const samples: Sample<'node_id' | 'kind' | 'health'>[] = [];
      for (const [key, byHealth] of counts) {
        const [node_id, kind] = JSON.parse(key) as [string, string];
        for (const [health, value] of byHealth) samples.push({ labels: { node_id, kind, health }, value });
      }
      return samples;
    },
  });
}

/**
 * `dn42_telemetry_ingest_lag_seconds{node_id}`: how late each node's latest
 * runtime snapshot arrived, its server receipt time minus the agent's
 * `captured_at` (0 when the agent's clock is ahead). An agent that holds
 * snapshots back (a broken uplink, a slow server) shows here before its node
 * goes stale; one that sends nothing at all is the stale alert's.
 */
export function ingestLagGauge(registry: Registry, log: Logger, read: () => Promise<readonly { node_id: string; lag_seconds: number }[]>): void {
  sampledGauge(registry, log, {
    name: 'dn42_telemetry_ingest_lag_seconds',
    help: "seconds between the agent's captured_at and the server's receipt of each node's latest runtime snapshot",
    labelNames: ['node_id'],
    read: async () => (await read()).map((r) => ({ labels: { node_id: r.node_id }, value: Math.max(0, r.lag_seconds) })),
  });
}

/**
 * The flap level of the fleet: `dn42_prefix_flap_changes_per_second` (the
 * console's flap-rate gauge: the trimmed mean over the last 15 complete minutes
 * of the flap-rate archive) and `dn42_flap_alerts_open{kind}` (session, prefix;
 * both present).
 */
export function flapGauges(
  registry: Registry,
  log: Logger,
  read: { rate: () => Promise<number>; openAlerts: () => Promise<{ session: number; prefix: number }> },
): void {
  sampledGauge(registry, log, {
    name: 'dn42_prefix_flap_changes_per_second',
    help: 'prefix changes per second over the fleet, trimmed mean of the last 15 complete minutes (the console flap-rate gauge)',
    read: async () => [{ labels: {}, value: await read.rate() }],
  });
  sampledGauge(registry, log, {
    name: 'dn42_flap_alerts_open',
    help: 'flap alerts open now (GET /ui/fleet/flap-alerts?active=1), by kind: session, prefix',
    labelNames: ['kind'],
    read: async () => {
      const open = await read.openAlerts();
      return [
        { labels: { kind: 'session' }, value: open.session },
        { labels: { kind: 'prefix' }, value: open.prefix },
      ];
    },
  });
}
