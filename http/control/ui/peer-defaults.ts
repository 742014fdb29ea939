import { Type } from '@sinclair/typebox';
import { listInterfaces } from '../../../projections/fleet/queries.js';
import type { ServiceContext } from '../../shared/context.js';
import { ApiRouter } from '../../shared/routes.js';
import { ADMIN, NodeIdParams, nodeOr404 } from '../fleet/common.js';

const PeerDefaults = Type.Object({
  node_id: Type.String(),
  wireguard: Type.Object({
    private_key_ref: Type.Union([Type.Literal('node'), Type.Null()], { description: "`node` once the node's agent has registered its key pair; null before" }),
    link_local: Type.Union([Type.String(), Type.Null()], { description: "the node's eBGP link-local address; null when not set" }),
    used_listen_ports: Type.Array(Type.Integer(), { description: 'listen ports of every interface of the node, enabled or not, ascending, each once' }),
  }),
});

/** `GET /ui/nodes/{id}/peer-defaults`: what the new-peering wizard pre-fills and must avoid. */
export function peerDefaultsRoutes(ctx: ServiceContext): ApiRouter {
  return new ApiRouter('/control/v1').route({
    security: ADMIN,
    tags: ['console'],
    method: 'get',
    path: '/ui/nodes/{node_id}/peer-defaults',
    summary: 'wizard defaults for a new peering on a node',
    params: NodeIdParams,
    responses: { 200: PeerDefaults, 404: 'unknown node' },
    handler: async (req, res) => {
      const node = await nodeOr404(ctx, req.params.node_id);
      const ports = (await listInterfaces(ctx.pool, node.node_id)).map((i) => i.spec.listen_port).filter((p): p is number => typeof p === 'number');
      res.json({
        node_id: node.node_id,
        wireguard: {
          // Every interface of a node uses the node's one key pair, which exists once its agent registered it.
          private_key_ref: node.wireguard_public_key === null ? null : 'node',
          link_local: node.link_local,
          used_listen_ports: [...new Set(ports)].sort((a, b) => a - b),
        },
      });
    },
  });
}
