import type { FleetDeps } from '../../../commands/fleet-write.js';
import { enablePeer } from '../../../commands/fleet-ops/peer-mitigations.js';
import type { ServiceContext } from '../../shared/context.js';
import type { ApiRouter } from '../../shared/routes.js';
import { ADMIN, metadataOf } from '../fleet/common.js';
import { AsnBody, PeerResult, TAGS } from './schemas.js';

/** `POST /admin/fleet/mitigations/peer-enable`: the sessions peer-disable turned off come back as they were. */
export function peerEnableRoute(r: ApiRouter, ctx: ServiceContext, deps: FleetDeps): void {
  r.route({
    method: 'post',
    path: '/admin/fleet/mitigations/peer-enable',
    summary: 'restore the eBGP sessions of an AS that peer-disable turned off',
    security: ADMIN,
    tags: TAGS.mitigations,
    body: AsnBody,
    responses: { 200: PeerResult, 404: 'no bgp sessions with remote_asn <asn>' },
    handler: async (req, res) => {
      res.json(await enablePeer(deps, req.body.asn, metadataOf(ctx, req, res)));
    },
  });
}
