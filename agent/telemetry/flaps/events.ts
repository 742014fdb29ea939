import type { RouteView } from './views.js';

/** One route change seen between two observations, attributed to the peer AS of the path it concerns. */
export interface RouteEvent {
  kind: 'announce' | 'withdraw' | 'change';
  prefix: string;
  protocol: string;
  peer_asn: number | null;
  origin_asn: number | null;
  as_path: number[];
}

/**
 * The route changes between two observations of BIRD's BGP routes: a route
 * that appeared (announce), one that went (withdraw), and one whose
 * attributes or change time differ (change: a new path, or a withdrawal and
 * re-announcement between the two looks, which BIRD's change time gives
 * away). A stamp that only aged from a time of day to a bare date is no
 * change. A change that moves the route to another peer AS counts at both:
 * it left the old one and arrived at the new one. Pure.
 */
export function routeEvents(before: ReadonlyMap<string, RouteView>, after: ReadonlyMap<string, RouteView>): RouteEvent[] {
  const events: RouteEvent[] = [];
  const event = (kind: RouteEvent['kind'], v: RouteView): RouteEvent => ({
    kind,
    prefix: v.prefix,
    protocol: v.protocol,
    peer_asn: v.peer_asn,
    origin_asn: v.origin_asn,
    as_path: v.as_path,
  });
  for (const [key, now] of after) {
    const was = before.get(key);
    if (!was) events.push(event('announce', now));
    else if (!changed(was, now)) continue;
    else if (was.peer_asn === now.peer_asn) events.push(event('change', now));
    else events.push(event('withdraw', was), event('announce', now));
  }
  for (const [key, was] of before) if (!after.has(key)) events.push(event('withdraw', was));
  return events;
}

const changed = (was: RouteView, now: RouteView): boolean => was.attributes !== now.attributes || (was.stamp !== now.stamp && now.timed);

/**
 * How many changes each event stands for. A route seen changed once may have
 * flapped many times between two looks; BIRD's per-protocol import counters
 * (accepted updates plus withdrawals) say how many changes the protocol took
 * in all, and that total is spread evenly over the protocol's events. A
 * counter that went down (the session restarted) or is unknown gives weight 1,
 * as does a total smaller than what was seen.
 */
export function eventWeights(events: readonly RouteEvent[], before: ReadonlyMap<string, number>, after: ReadonlyMap<string, number>): number[] {
  const seen = new Map<string, number>();
  for (const e of events) seen.set(e.protocol, (seen.get(e.protocol) ?? 0) + 1);
  return events.map((e) => {
    const [was, now] = [before.get(e.protocol), after.get(e.protocol)];
    if (was === undefined || now === undefined || now < was) return 1;
    return Math.max(1, (now - was) / seen.get(e.protocol)!);
  });
}
