import { Type } from '@sinclair/typebox';
import type { Grid } from '../../../domain/series/grid.js';
import { asNames } from '../../../infra/registry/client.js';
import { interfaceRates, interfaceTotals, trafficBytes, type InterfaceRef, type Rate } from '../../../infra/telemetry/series-queries.js';
import { interfacePeerings } from '../../../projections/fleet/queries.js';
import type { ServiceContext } from '../../shared/context.js';
import { component } from '../../shared/routes.js';
import { NullableNumber } from './series-params.js';
import { TrafficPoint, trafficPoints } from './traffic-trend.js';

/** Document 3: with `as_traffic`, the top 5 peer AS series and a top 50 share table. */
export const AS_SERIES_TOP = 5;
export const AS_TABLE_TOP = 50;

const Name = Type.Union([Type.String(), Type.Null()], { description: 'registry as-name; null without a replica or unknown' });
const Bytes = Type.Number({ description: 'bytes counted in the window' });
export const TrafficByAs = Type.Object({
  series: Type.Array(Type.Object({ asn: Type.Integer(), name: Name, points: Type.Array(TrafficPoint) })),
  table: Type.Array(
    component(
      'AsTrafficRow',
      Type.Object({
        asn: Type.Integer({ description: 'the peer AS' }),
        name: Name,
        rx_bytes: Bytes,
        tx_bytes: Bytes,
        share: { ...NullableNumber, description: "the AS's bytes (rx + tx) over all external bytes" },
      }),
    ),
  ),
});
export const TrafficMix = Type.Object({
  internal_bytes: Bytes,
  external_bytes: Bytes,
  rx_bytes: Bytes,
  tx_bytes: Bytes,
});

/** The peer AS of each interface of an external peering, by `node_id interface`; every other interface is internal. */
async function externalInterfaces(ctx: Pick<ServiceContext, 'pool'>): Promise<Map<string, number>> {
  const asOf = new Map<string, number>();
  for (const [nodeId, interfaces] of await interfacePeerings(ctx.pool)) {
    for (const [name, peering] of interfaces) if (peering && !peering.is_internal) asOf.set(`${nodeId} ${name}`, peering.remote_asn);
  }
  return asOf;
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
  const asOf = await externalInterfaces(ctx);
  const nodeIds = [...new Set([...asOf.keys()].map((k) => k.split(' ')[0]))];
  const [totals, all] = await Promise.all([interfaceTotals(ctx.pool, grid, nodeIds), trafficBytes(ctx.pool, grid)]);
  const byAs = new Map<number, { asn: number; rx: number; tx: number; interfaces: InterfaceRef[] }>();
  for (const t of totals) {
    const asn = asOf.get(`${t.node_id} ${t.interface}`);
    if (asn === undefined) continue;
    const row = byAs.get(asn) ?? { asn, rx: 0, tx: 0, interfaces: [] };
    row.rx += t.rx_bytes;
    row.tx += t.tx_bytes;
    row.interfaces.push({ node_id: t.node_id, interface: t.interface });
    byAs.set(asn, row);
  }
  const ranked = [...byAs.values()].sort((a, b) => b.rx + b.tx - (a.rx + a.tx) || a.asn - b.asn);
  const external = ranked.reduce((s, r) => s + r.rx + r.tx, 0);
  const table = ranked.slice(0, AS_TABLE_TOP);
  const top = table.slice(0, AS_SERIES_TOP);
  const [names, cells] = await Promise.all([
    namesOrNull(
      ctx,
      table.map((r) => r.asn),
    ),
    interfaceRates(
      ctx.pool,
      grid,
      top.flatMap((r) => r.interfaces),
    ),
  ]);
  const name = (asn: number) => names?.get(asn) ?? null;
  /** An AS's rate in a bucket is the sum of its interfaces' rates measured there. */
  const ratesOf = (asn: number) => {
    const rates = new Map<number, Rate>();
    for (const c of cells.filter((c) => asOf.get(`${c.node_id} ${c.interface}`) === asn)) {
      const r = rates.get(c.b) ?? { rx: 0, tx: 0 };
      rates.set(c.b, { rx: r.rx + c.rx, tx: r.tx + c.tx });
    }
    return rates;
  };
  return {
    traffic_by_as: {
      series: top.map((r) => ({ asn: r.asn, name: name(r.asn), points: trafficPoints(grid, ratesOf(r.asn)) })),
      table: table.map((r) => ({
        asn: r.asn,
        name: name(r.asn),
        rx_bytes: whole(r.rx),
        tx_bytes: whole(r.tx),
        share: external > 0 ? Math.round(((r.rx + r.tx) / external) * 10_000) / 10_000 : null,
      })),
    },
    traffic_mix: {
      internal_bytes: whole(Math.max(0, all.rx + all.tx - external)),
      external_bytes: whole(external),
      rx_bytes: whole(all.rx),
      tx_bytes: whole(all.tx),
    },
  };
}
