import type { FleetDeps } from '../../../commands/fleet-write.js';
import { disablePeer } from '../../../commands/fleet-ops/peer-mitigations.js';
import type { ServiceContext } from '../../shared/context.js';
import type { ApiRouter } from '../../shared/routes.js';
import { ADMIN, metadataOf } from '../fleet/common.js';
import { AsnBody, PeerResult, TAGS } from './schemas.js';

/** `POST /admin/fleet/mitigations/peer-disable`: every eBGP session of an AS off (protocol removed, tunnel kept). */
export function peerDisableRoute(r: ApiRouter, ctx: ServiceContext, deps: FleetDeps): void {
  r.route({
    method: 'post',
    path: '/admin/fleet/mitigations/peer-disable',
    summary: 'disable every eBGP session of an AS on every node (protocol removed, tunnel kept)',
    security: ADMIN,
    tags: TAGS.mitigations,
    body: AsnBody,
    responses: { 200: PeerResult, 404: 'no bgp sessions with remote_asn <asn>' },
    handler: async (req, res) => {
      res.json(await disablePeer(deps, req.body.asn, metadataOf(ctx, req, res)));
    },
  });
}
