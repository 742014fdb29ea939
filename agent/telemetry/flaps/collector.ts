import type { PrefixFlaps } from '../../../domain/telemetry/reports.js';
import { parseBirdProtocols, type BirdBgpProtocol } from '../bird.js';
import { parseBirdRouteList } from '../routes.js';
import { eventWeights, routeEvents, type RouteEvent } from './events.js';
import { DecayedScores, FLAP_TOP_N } from './scores.js';
import { routeViews, type RouteView } from './views.js';

/** One look at BIRD: `show route all` and `show protocols all` (read right after). */
export interface BirdObservation {
  protocols: string;
  routes: string;
}

/** One look as `observe` reads it: the BGP protocols (states, `since`, import counters) and the route views keyed by route. */
export interface ParsedObservation {
  protocols: readonly Pick<BirdBgpProtocol, 'name' | 'state' | 'since' | 'import_changes'>[];
  views: Map<string, RouteView>;
}

type FeedState = PrefixFlaps['feed_state'];

/**
 * The agent's prefix flap collector: BIRD's BGP routes observed again and
 * again, each observation compared with the previous one (routeEvents), every
 * change weighted by BIRD's import counters (eventWeights) and added to the
 * decayed score of (prefix, peer AS) (DecayedScores); one change reaching
 * the node over several sessions (a direct eBGP route and iBGP relays of it)
 * counts once per look. The "collector session"
 * of the report is BIRD itself: `unknown` before the first look, `established`
 * while BIRD answers with at least one established BGP session, `down`
 * otherwise. After BIRD could not be read the next look starts a new baseline,
 * so a BIRD restart is not taken for every route flapping. Pure: callers pass
 * the clock.
 */
export class FlapCollector {
  readonly scores: DecayedScores;
  private views: Map<string, RouteView> | null = null;
  private counters: Map<string, { since: string | null; changes: number | null }> | null = null;
  private feed: FeedState = 'unknown';
  /** Changes (weighted) seen since the previous report, every key included. */
  private changesSinceReport = 0;

  constructor(halfLifeMs?: number) {
    this.scores = new DecayedScores(halfLifeMs);
  }

  get feedState(): FeedState {
    return this.feed;
  }

  /** Takes one observation at `now`; returns the changes it found (none for a baseline). */
  observe(seen: BirdObservation, localAsn: number | null, now: number): RouteEvent[] {
    return this.observeParsed(
      { protocols: parseBirdProtocols(seen.protocols, new Date(now)), views: routeViews(parseBirdRouteList(seen.routes), localAsn) },
      now,
    );
  }

  /** The same look once read from BIRD's text (the flap lab in spec/support/flap-lab/ builds it directly). */
  observeParsed({ protocols, views }: ParsedObservation, now: number): RouteEvent[] {
    const counters = new Map(protocols.map((p) => [p.name, { since: p.since, changes: p.import_changes }]));
    const events = this.views ? routeEvents(this.views, views) : [];
    const weights = this.counters ? eventWeights(events, comparable(this.counters, counters), changesOf(counters)) : [];
    for (const { event, weight } of strongestPerKey(events, weights)) {
      this.scores.add(event.prefix, event.peer_asn, event.origin_asn, weight, now, event);
      this.changesSinceReport += weight;
    }
    this.views = views;
    this.counters = counters;
    this.feed = protocols.some((p) => p.state === 'established') ? 'established' : 'down';
    return events;
  }

  /** BIRD could not be read: the feed is down and the next look is a new baseline. */
  lost(): void {
    this.views = null;
    this.counters = null;
    this.feed = 'down';
  }

  /**
   * The `POST /agent/prefix-flaps` body: the top N scores decayed to `now`, the
   * feed state, and the changes since the previous report (per entry, and in
   * all as `total_changes`). Taking a report starts those counts again.
   */
  report(nodeId: string, now: number, topN = FLAP_TOP_N): PrefixFlaps {
    const body: PrefixFlaps = {
      node_id: nodeId,
      captured_at: new Date(now).toISOString(),
      feed_state: this.feed,
      entries: this.scores.top(now, topN).map((s) => ({
        prefix: s.prefix,
        peer_asn: s.peer_asn,
        origin_asn: s.origin_asn,
        score: Math.round(s.score * 1000) / 1000,
        flaps: count(s.flaps),
        last_flap_at: new Date(s.last_flap_at).toISOString(),
        as_path: s.as_path,
        announcements: count(s.announcements),
        withdrawals: count(s.withdrawals),
      })),
      total_changes: count(this.changesSinceReport),
    };
    this.changesSinceReport = 0;
    this.scores.resetSinceReport();
    return body;
  }
}

const count = (weighted: number): number => Math.min(2147483647, Math.round(weighted));

type Counters = Map<string, { since: string | null; changes: number | null }>;

const changesOf = (counters: Counters): Map<string, number> =>
  new Map([...counters].flatMap(([name, c]) => (c.changes === null ? [] : [[name, c.changes] as const])));

/** The earlier counters of the protocols that did not restart in between (a restart starts BIRD's counters at zero). */
const comparable = (before: Counters, after: Counters): Map<string, number> =>
  new Map([...before].flatMap(([name, c]) => (c.changes === null || after.get(name)?.since !== c.since ? [] : [[name, c.changes] as const])));

/** Per (prefix, peer AS), the event with the highest weight: the same change seen through several sessions is one change. */
function strongestPerKey(events: readonly RouteEvent[], weights: readonly number[]): { event: RouteEvent; weight: number }[] {
  const byKey = new Map<string, { event: RouteEvent; weight: number }>();
  events.forEach((event, i) => {
    const key = `${event.prefix} ${event.peer_asn}`;
    if ((byKey.get(key)?.weight ?? 0) < weights[i]) byKey.set(key, { event, weight: weights[i] });
  });
  return [...byKey.values()];
}
