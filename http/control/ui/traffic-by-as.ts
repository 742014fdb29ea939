import { Type } from '@sinclair/typebox';
import type { Grid } from '../../../domain/series/grid.js';
import { asNames } from '../../../infra/registry/client.js';
import { groupTraffic, trafficBytes, type GroupCell, type InterfaceGroup } from '../../../infra/telemetry/series-queries.js';
import { interfacePeerings } from '../../../projections/fleet/queries.js';
import type { ServiceContext } from '../../shared/context.js';
import { NullableNumber } from './series-params.js';
import { TrafficPoint, trafficPoints } from './traffic-trend.js';

/** Document 3: with `as_traffic`, the top 5 peer AS series and a top 50 share table. */
export const AS_SERIES_TOP = 5;
export const AS_TABLE_TOP = 50;

const Name = Type.Union([Type.String(), Type.Null()], { description: 'registry as-name; null without a replica or unknown' });
const Bytes = Type.Number({ description: 'bytes counted in the window' });
export const TrafficByAs = Type.Object({
  series: Type.Array(Type.Object({ asn: Type.Integer(), name: Name, points: Type.Array(TrafficPoint) })),
  table: Type.Array(Type.Object({ asn: Type.Integer(), name: Name, rx_bytes: Bytes, tx_bytes: Bytes, share: NullableNumber })),
});
export const TrafficMix = Type.Object({
  internal_bytes: Bytes,
  external_bytes: Bytes,
  rx_bytes: Bytes,
  tx_bytes: Bytes,
});

/** The WireGuard interfaces of external peerings, grouped by the peering's `remote_asn`; every other interface is internal. */
async function externalInterfaces(ctx: Pick<ServiceContext, 'pool'>): Promise<InterfaceGroup[]> {
  const groups: InterfaceGroup[] = [];
  for (const [nodeId, interfaces] of await interfacePeerings(ctx.pool)) {
    for (const [name, peering] of interfaces) if (peering && !peering.is_internal) groups.push({ node_id: nodeId, interface: name, group: String(peering.remote_asn) });
  }
  return groups;
}

/** Registry names never fail the dashboard: without a replica, or when it does not answer, names are null. */
async function namesOrNull(ctx: ServiceContext, asns: readonly number[]): Promise<ReadonlyMap<number, string> | null> {
  if (asns.length === 0) return null;
  try {
    return await asNames(ctx.config, asns, ctx.log);
  } catch (err) {
    ctx.log.warn({ err }, 'registry names unavailable; traffic_by_as names left null');
    return null;
  }
}

const whole = (x: number) => Math.round(x);

/**
 * `traffic_by_as` and `traffic_mix` of the dashboard over the trend's window:
 * peer AS = the peering's `remote_asn`; ranked by the bytes counted in the
 * window (rx + tx); share = the AS's bytes over all external bytes. Interfaces
 * without an external peering are internal and not ranked.
 */
export async function trafficByAs(ctx: ServiceContext, grid: Grid) {
  const [cells, total] = await Promise.all([externalInterfaces(ctx).then((groups) => groupTraffic(ctx.pool, grid, groups)), trafficBytes(ctx.pool, grid)]);
  const byAs = new Map<number, GroupCell[]>();
  for (const c of cells) byAs.set(Number(c.group), [...(byAs.get(Number(c.group)) ?? []), c]);
  const ranked = [...byAs.entries()]
    .map(([asn, rows]) => ({ asn, rows, rx: rows.reduce((s, r) => s + r.rx_bytes, 0), tx: rows.reduce((s, r) => s + r.tx_bytes, 0) }))
    .sort((a, b) => b.rx + b.tx - (a.rx + a.tx) || a.asn - b.asn);
  const external = ranked.reduce((s, r) => s + r.rx + r.tx, 0);
  const table = ranked.slice(0, AS_TABLE_TOP);
  const names = await namesOrNull(ctx, table.map((r) => r.asn));
  const name = (asn: number) => names?.get(asn) ?? null;
  return {
    traffic_by_as: {
      series: table.slice(0, AS_SERIES_TOP).map((r) => ({ asn: r.asn, name: name(r.asn), points: trafficPoints(grid, new Map(r.rows.map((c) => [c.b, { rx: c.rx, tx: c.tx }]))) })),
      table: table.map((r) => ({ asn: r.asn, name: name(r.asn), rx_bytes: whole(r.rx), tx_bytes: whole(r.tx), share: external > 0 ? Math.round(((r.rx + r.tx) / external) * 10_000) / 10_000 : null })),
    },
    traffic_mix: {
      internal_bytes: whole(Math.max(0, total.rx + total.tx - external)),
      external_bytes: whole(external),
      rx_bytes: whole(total.rx),
      tx_bytes: whole(total.tx),
    },
  };
}
