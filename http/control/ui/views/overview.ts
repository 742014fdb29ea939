import { buildFleetOverview as overviewOf, type FleetOverview } from '../../../../domain/public/fleet-overview.js';
import type { ServiceContext } from '../../../shared/context.js';
import { loadFleetFacts } from '../../public/facts.js';

export type { FleetOverview };

/**
 * `GET /ui/fleet/overview`, and the dashboard's `overview` block (the two must be
 * equal): every node with health, capabilities, liveness, geo and its physical
 * WireGuard adjacency, `summary` counts by health and the top-level
 * `agent_summary`. `/public/fleet` is the same builder behind its allow-list.
 */
export async function buildFleetOverview(ctx: Pick<ServiceContext, 'pool'>, now: Date): Promise<FleetOverview> {
  const { facts, targetVersion } = await loadFleetFacts(ctx.pool, now);
  return overviewOf(facts, { generatedAt: now, targetVersion });
}
