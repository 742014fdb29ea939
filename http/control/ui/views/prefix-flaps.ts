import { asnsOf, EMPTY_LOCALIZATION_SUMMARY, feedRows, flatRows, prefixRows, type Names } from '../../../../domain/flaps/prefix-rows.js';
import { fleetPrefixFlaps } from '../../../../infra/telemetry/prefix-flaps.js';
import { listNodes } from '../../../../projections/fleet/queries.js';
import type { ServiceContext } from '../../../shared/context.js';
import { originNames } from './routing.js';

export interface PrefixFlapsQuery {
  min_score: number;
  limit: number;
  group?: 'prefix';
}

/**
 * `GET /ui/fleet/prefix-flaps`: every node's latest report, decayed to the
 * service clock, flat or grouped by prefix. Names come from the registry
 * replica for the ASNs of the answered rows only (null without a replica).
 * Decommissioned and deleted nodes are left out.
 */
export async function fleetPrefixFlapsView(ctx: ServiceContext, q: PrefixFlapsQuery) {
  const now = ctx.now();
  const [stored, nodes] = await Promise.all([fleetPrefixFlaps(ctx.pool), listNodes(ctx.pool)]);
  // A decommissioned node runs the empty state and a deleted one is gone: their last reports are not the fleet's.
  const active = new Set(nodes.filter((n) => n.lifecycle !== 'decommissioned').map((n) => n.node_id));
  const rows = stored.rows.filter((r) => active.has(r.node_id));
  const feeds = stored.feeds.filter((f) => active.has(f.node_id));
  const build = (names: Names) =>
    q.group === 'prefix' ? prefixRows(rows, names, now.getTime(), q.min_score, q.limit) : flatRows(rows, names, now.getTime(), q.min_score, q.limit);
  const answered = build(new Map());
  const shown = new Set(answered.map((r) => r.prefix));
  const names = await originNames(ctx, asnsOf(rows.filter((r) => shown.has(r.prefix))));
  const listed = build(names);
  return {
    generated_at: now.toISOString(),
    ...(q.group === 'prefix' ? { prefixes: listed } : { rows: listed }),
    feeds: feedRows(feeds, now.getTime()),
    // Localisation is not built yet: every row's `localization` is null, so every count is 0.
    localization_summary: { ...EMPTY_LOCALIZATION_SUMMARY },
  };
}
