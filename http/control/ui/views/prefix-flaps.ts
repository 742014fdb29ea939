import { localizationSummary, localizePrefixes, sessionScoresOf, withNames, type Localization } from '../../../../domain/flaps/localize.js';
import { asnsOf, feedRows, flatRows, prefixRows, selectedPrefixes, type Names } from '../../../../domain/flaps/prefix-rows.js';
import { withTransaction, type Queryable } from '../../../../infra/db/pool.js';
import { readPrefixFlaps } from '../../../../infra/telemetry/prefix-flaps.js';
import { listNodes } from '../../../../projections/fleet/queries.js';
import type { ServiceContext } from '../../../shared/context.js';
import { fleetSessionRows } from '../flaps/sessions.js';
import { originNames } from '../../shared/routing-views.js';

export interface PrefixFlapsQuery {
  min_score: number;
  limit: number;
  group?: 'prefix';
}

/** At most this many localisations in `/ui/fleet/prefix-flaps/localize` (the prefix-flaps row limit). */
export const LOCALIZE_LIMIT = 500;

/**
 * The snapshot both prefix-flap views answer from: every active node's latest
 * rows and feeds, and every prefix's localisation computed from them and the
 * session scores read in the same transaction. Decommissioned and deleted
 * nodes are left out (a decommissioned node runs the empty state and a
 * deleted one is gone: their last reports are not the fleet's).
 */
async function snapshot(ctx: ServiceContext, now: Date) {
  const read = async (db: Queryable) => ({ ...(await readPrefixFlaps(db)), sessions: sessionScoresOf(await fleetSessionRows(db, now)) });
  const [stored, nodes] = await Promise.all([withTransaction(ctx.pool, read, 'REPEATABLE READ'), listNodes(ctx.pool)]);
  const active = new Set(nodes.filter((n) => n.lifecycle !== 'decommissioned').map((n) => n.node_id));
  const rows = stored.rows.filter((r) => active.has(r.node_id));
  const feeds = stored.feeds.filter((f) => active.has(f.node_id));
  return { rows, feeds, localize: (names: Names) => localizePrefixes(rows, stored.sessions, names, now.getTime()) };
}

/**
 * `GET /ui/fleet/prefix-flaps`: flat or grouped by prefix, decayed to the
 * service clock. Names come from the registry replica for the ASNs of the
 * answered rows only (null without a replica). Each row carries its prefix's
 * localisation; the summary counts every selected prefix (min_score), the
 * ones cut by `limit` included.
 */
export async function fleetPrefixFlapsView(ctx: ServiceContext, q: PrefixFlapsQuery) {
  const now = ctx.now();
  const { rows, feeds, localize } = await snapshot(ctx, now);
  const build = (names: Names, localizations?: ReadonlyMap<string, Localization | null>) =>
    q.group === 'prefix'
      ? prefixRows(rows, names, now.getTime(), q.min_score, q.limit, localizations)
      : flatRows(rows, names, now.getTime(), q.min_score, q.limit, localizations);
  const shown = new Set(build(new Map()).map((r) => r.prefix));
  // Culprits are peers and origins of the prefix's own rows, and moas origins its origins: the rows' names cover them.
  const names = await originNames(ctx, asnsOf(rows.filter((r) => shown.has(r.prefix))));
  const localizations = localize(names);
  const selected = selectedPrefixes(rows, now.getTime(), q.min_score);
  return {
    generated_at: now.toISOString(),
    ...(q.group === 'prefix'
      ? { prefixes: prefixRows(rows, names, now.getTime(), q.min_score, q.limit, localizations) }
      : { rows: flatRows(rows, names, now.getTime(), q.min_score, q.limit, localizations) }),
    feeds: feedRows(feeds, now.getTime()),
    localization_summary: localizationSummary(selected.map((p) => localizations.get(p) ?? null)),
  };
}

/** `GET /ui/fleet/prefix-flaps/localize`: every located prefix, by confidence descending (then prefix), at most LOCALIZE_LIMIT. */
export async function prefixFlapLocalizationsView(ctx: ServiceContext) {
  const now = ctx.now();
  const { rows, localize } = await snapshot(ctx, now);
  const located = [...localize(new Map())].filter((e): e is [string, Localization] => e[1] !== null);
  located.sort(([pa, a], [pb, b]) => b.confidence - a.confidence || (pa < pb ? -1 : pa > pb ? 1 : 0));
  const kept = located.slice(0, LOCALIZE_LIMIT);
  const prefixes = new Set(kept.map(([p]) => p));
  const names = await originNames(ctx, asnsOf(rows.filter((r) => prefixes.has(r.prefix))));
  return { localizations: kept.map(([prefix, l]) => ({ prefix, ...withNames(l, names) })) };
}

/** One prefix's localisation now (the notifier's flap alert lines), with the culprit's registry name when the replica has it. */
export async function prefixLocalization(ctx: ServiceContext, prefix: string, now: Date): Promise<Localization | null> {
  const { rows, localize } = await snapshot(ctx, now);
  const located = localize(new Map()).get(prefix) ?? null;
  if (!located) return null;
  return withNames(located, await originNames(ctx, asnsOf(rows.filter((r) => r.prefix === prefix))));
}
