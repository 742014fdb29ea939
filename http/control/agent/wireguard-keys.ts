import { Type } from '@sinclair/typebox';
import { registerWireguardKey } from '../../../commands/wireguard-keys.js';
import { WireguardKeyMismatch } from '../../../domain/node/decide.js';
import { WireguardKeysSchema } from '../../../domain/telemetry/reports.js';
import type { ServiceContext } from '../../shared/context.js';
import { requestMetadata } from '../../shared/metadata.js';
import { fleetDeps } from '../fleet/common.js';
import { AGENT, AGENT_TAGS, agentNode, agentRouter } from './router.js';

const KeyResponse = Type.Object({
  node_id: Type.String(),
  accepted: Type.Boolean(),
  status: Type.Union([Type.Literal('stored'), Type.Literal('matched'), Type.Literal('rejected')]),
  detail: Type.Optional(Type.String()),
  propagated_to: Type.Array(Type.String()),
});

/**
 * `POST /agent/wireguard-keys`: registers the node's WireGuard public key.
 * `stored` (first key; internal peerings pointing here re-materialised in the same
 * append, listed in `propagated_to`), `matched` (same key; escrow refreshed when
 * given and changed), or 409 `rejected` with the mismatch in `detail` (nothing written).
 */
export function agentWireguardKeyRoutes(ctx: ServiceContext) {
  const path = '/agent/wireguard-keys';
  const deps = fleetDeps(ctx);
  return agentRouter(ctx, [path], 'body').route({
    method: 'post',
    path,
    summary: 'register the node WireGuard public key (and escrow)',
    security: AGENT,
    tags: AGENT_TAGS,
    body: WireguardKeysSchema,
    responses: {
      200: KeyResponse,
      401: 'missing, wrong, expired or revoked agent token',
      403: 'node_id is not the token node',
      404: 'unknown node <id>',
      409: KeyResponse,
      422: 'invalid body',
    },
    handler: async (req, res) => {
      const { public_key, private_key_escrow } = req.body;
      const node_id = agentNode(res);
      try {
        const outcome = await registerWireguardKey(deps, node_id, public_key, private_key_escrow || null, requestMetadata(req, res, ctx.now()));
        res.json({ node_id, accepted: true, status: outcome.status, propagated_to: outcome.propagated_to });
      } catch (err) {
        if (!(err instanceof WireguardKeyMismatch)) throw err;
        res.status(409).json({ node_id, accepted: false, status: 'rejected', detail: err.message, propagated_to: [] });
      }
    },
  });
}
