import { Type, type TSchema } from '@sinclair/typebox';
import { hostPrefixes, internalTopologyView } from '../../../domain/console/internal-topology.js';
import type { BaseTemplate } from '../../../domain/node/base-template.js';
import type { DesiredState } from '../../../domain/desired-state/schema.js';
import { NotFound } from '../../../domain/errors.js';
import { routingHints } from '../../../infra/telemetry/routing-hints.js';
import { generationAt, listPeerings, nodesPeeringInternallyWith } from '../../../projections/fleet/queries.js';
import type { ServiceContext } from '../../shared/context.js';
import { ApiRouter } from '../../shared/routes.js';
import { ADMIN, NodeIdParams, nodeOr404 } from '../fleet/common.js';

const OrNull = <T extends TSchema>(t: T, description?: string) => Type.Union([t, Type.Null()], description ? { description } : {});
const Family = Type.Union([Type.Literal('v4'), Type.Literal('v6')]);
const RibRoutes = OrNull(Type.Integer({ minimum: 0 }), 'best routes of the protocol in the latest routing table; null: no table reported');
const InRib = OrNull(Type.Boolean(), 'the host route of the address is in the latest routing table; null: no table reported');

const InternalTopology = Type.Object({
  node_id: Type.String(),
  generation: Type.Integer({ description: 'the published generation the topology is read from' }),
  captured_at: OrNull(Type.String({ format: 'date-time' }), 'when the routing table the hints come from was captured; null: none reported'),
  routers: Type.Array(
    Type.Object({
      node_id: Type.String(),
      asn: Type.Integer(),
      router_id: Type.String(),
      loopback_ipv4: OrNull(Type.String()),
      loopback_ipv6: OrNull(Type.String()),
      sources: Type.Array(Type.Union([Type.Literal('template'), Type.Literal('peering'), Type.Literal('inbound')])),
      sessions: Type.Array(Type.Object({ protocol: Type.String(), family: Family, neighbor: Type.String(), rib_routes: RibRoutes, in_rib: InRib })),
      rib_routes: RibRoutes,
      in_rib: OrNull(Type.Boolean(), "a host route of one of the router's loopbacks is in the table; null: no table, or no loopback"),
    }),
  ),
  unresolved_routers: Type.Array(Type.String(), {
    description: 'template routers missing from the published state (unknown, decommissioned or the node itself)',
  }),
  adjacencies: Type.Array(Type.Object({ interface: Type.String(), node_id: Type.String(), cost: Type.Integer() })),
  ospf: Type.Array(Type.Object({ protocol: Type.String(), family: Family, rib_routes: RibRoutes }), { description: 'empty without an adjacency' }),
  hosts: Type.Array(
    Type.Object({
      name: Type.String(),
      interface: Type.String(),
      addresses: Type.Array(Type.Object({ address: Type.String(), prefix: OrNull(Type.String()), in_rib: InRib })),
    }),
  ),
});

/** `GET /ui/nodes/{id}/internal-topology`: the published iBGP/OSPF topology with liveness hints from the latest routing table. */
export function internalTopologyRoutes(ctx: ServiceContext): ApiRouter {
  return new ApiRouter('/control/v1').route({
    security: ADMIN,
    tags: ['console'],
    method: 'get',
    path: '/ui/nodes/{node_id}/internal-topology',
    summary: "iBGP and OSPF view of a node's published desired state, with routing-table hints",
    params: NodeIdParams,
    responses: { 200: InternalTopology, 404: 'unknown node, or no published desired state' },
    handler: async (req, res) => {
      const node = await nodeOr404(ctx, req.params.node_id);
      const nodeId = node.node_id;
      const published = await generationAt(ctx.pool, nodeId);
      if (!published) throw new NotFound(`no desired state for node ${nodeId}`);
      const state = published.state as DesiredState;
      const [peerings, inbound, table] = await Promise.all([
        listPeerings(ctx.pool, nodeId),
        nodesPeeringInternallyWith(ctx.pool, nodeId, { enabledOnly: true }),
        routingHints(ctx.pool, nodeId, hostPrefixes(state)),
      ]);
      res.json(
        internalTopologyView({
          node_id: nodeId,
          generation: published.generation,
          state,
          template_routers: (node.base_template as BaseTemplate).bird?.internal_topology?.routers ?? [],
          peering_remotes: peerings.filter((p) => p.is_internal && p.enabled && p.remote_node_id).map((p) => p.remote_node_id!),
          inbound,
          table: table ?? null,
        }),
      );
    },
  });
}
