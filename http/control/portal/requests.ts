import { Type } from '@sinclair/typebox';
import { cancelRequest, createRequest } from '../../../commands/autopeering-requests.js';
import type { FleetDeps } from '../../../commands/fleet-write.js';
import { checkRouteCoverage, needsRegistry, RequestCreateInSchema, validateCreate } from '../../../domain/autopeering/create.js';
import { NotFound } from '../../../domain/errors.js';
import { registryClient, type RegistryClient } from '../../../infra/registry/client.js';
import { getPolicy } from '../../../projections/autopeering/queries.js';
import type { ServiceContext } from '../../shared/context.js';
import { throwIt } from '../../shared/errors.js';
import { ApiRouter } from '../../shared/routes.js';
import { fleetDeps, IdParam, intParam, metadataOf } from '../fleet/common.js';
import { PORTAL_NO_ASN, PORTAL_UNAUTHORIZED, requireVerifiedAsn } from './auth.js';
import { runPortalProbe } from './probe-run.js';
import { portalDetail, portalRows, type PortalRequestRow } from './requests-read.js';
import { PortalRequestCreatedSchema, PortalRequestDetailSchema, PortalRequestRowSchema } from './requests-schemas.js';
import { PORTAL_SECURITY, PORTAL_TAGS } from './schemas.js';

const RequestParams = IdParam('request_id');
const unknownRequest = (id: number) => new NotFound(`unknown autopeering request ${id}`);
const notOpen = (nodeId: string) => new NotFound(`node ${nodeId} is not open for autopeering`);

/**
 * The MTU probe that runs once after creation (document 3), after the answer
 * and the doorbell, outside the cooldown. It never fails the creation: no
 * connected agent, a timeout or any error is logged and the detail keeps
 * `mtu_probe` null until a probe succeeds.
 */
async function firstMtuProbe(ctx: ServiceContext, row: PortalRequestRow): Promise<void> {
  try {
    await runPortalProbe(ctx, row, 'mtu', { cooldown: false, signal: ctx.background.stopping });
  } catch (err) {
    ctx.log.info({ err, request_id: row.id, node_id: row.node_id }, 'first MTU probe of an autopeering request did not run');
  }
}

/** On KurrentDB the answer waits for the fleet and autopeering read models. */
function requestDeps(ctx: ServiceContext): FleetDeps {
  return { ...fleetDeps(ctx), settle: ctx.store.transactional ? undefined : () => ctx.projections.catchUp(['fleet', 'autopeering']) };
}

/**
 * `POST`, `GET /autopeering/requests` and `GET`, `DELETE /autopeering/requests/{id}`:
 * self-service peering for the session's verified ASN (403 without one).
 */
export function portalRequestRoutes(ctx: ServiceContext, registry: RegistryClient = registryClient(ctx.config, ctx.log)): ApiRouter {
  const deps = requestDeps(ctx);
  const common = { tags: PORTAL_TAGS, security: PORTAL_SECURITY };
  return new ApiRouter('/control/v1')
    .route({
      ...common,
      method: 'post',
      path: '/autopeering/requests',
      summary:
        'create a peering with a node in one transaction (lowest free external port, peering, interface, sessions, new desired state, doorbell after commit)',
      body: RequestCreateInSchema,
      responses: {
        201: PortalRequestCreatedSchema,
        ...PORTAL_UNAUTHORIZED,
        ...PORTAL_NO_ASN,
        404: 'node <id> is not open for autopeering',
        409: 'an external peering with the AS exists on the node, no capacity or port left, or the link-local address is taken',
        422: 'invalid field, tunnel address outside the registered route prefixes, node prerequisites missing, extended_next_hop false',
        503: 'registry replica unavailable',
      },
      handler: async (req, res) => {
        const who = requireVerifiedAsn(res);
        const request = validateCreate(req.body, who.asn);
        const policy = await getPolicy(ctx.pool, request.node_id);
        if (!policy?.policy.enabled) throw notOpen(request.node_id);
        if (needsRegistry(request)) checkRouteCoverage(who.asn, request, await registry.routes(who.asn));
        const outcome = await createRequest(deps, { asn: who.asn, mntner: who.mnt }, request, metadataOf(ctx, req, res), async (db, record) => {
          const [row] = await portalRows(db, who.asn, record.request_id);
          return row;
        });
        const answer = outcome.answer ?? throwIt(new Error(`request ${outcome.result.request_id} not in the read model after its write`));
        res.status(201).json({ ...answer, generation: outcome.published.find((p) => p.node_id === request.node_id)?.generation ?? null });
        void ctx.background.run(firstMtuProbe(ctx, answer));
      },
    })
    .route({
      ...common,
      method: 'get',
      path: '/autopeering/requests',
      summary: "the session AS's requests newest first, then its manually created external peerings (adopted: true)",
      responses: { 200: Type.Object({ requests: Type.Array(PortalRequestRowSchema) }), ...PORTAL_UNAUTHORIZED, ...PORTAL_NO_ASN },
      handler: async (_req, res) => {
        const who = requireVerifiedAsn(res);
        res.setHeader('Cache-Control', 'no-store');
        res.json({ requests: await portalRows(ctx.pool, who.asn) });
      },
    })
    .route({
      ...common,
      method: 'get',
      path: '/autopeering/requests/{request_id}',
      summary: "one request of the session's AS with provision, live (latest runtime snapshot), mtu_probe and latency",
      params: RequestParams,
      responses: { 200: PortalRequestDetailSchema, ...PORTAL_UNAUTHORIZED, ...PORTAL_NO_ASN, 404: 'unknown autopeering request <id>' },
      handler: async (req, res) => {
        const who = requireVerifiedAsn(res);
        const id = intParam(req.params.request_id);
        res.setHeader('Cache-Control', 'no-store');
        res.json((await portalDetail(ctx.pool, who.asn, id)) ?? throwIt(unknownRequest(id)));
      },
    })
    .route({
      ...common,
      method: 'delete',
      path: '/autopeering/requests/{request_id}',
      summary: 'cancel a provisioned request: its peering is removed, the seat and the port are freed; answers the cancelled row',
      params: RequestParams,
      responses: {
        200: PortalRequestRowSchema,
        ...PORTAL_UNAUTHORIZED,
        ...PORTAL_NO_ASN,
        404: 'unknown autopeering request <id>',
        409: 'autopeering request <id> is not provisioned',
      },
      handler: async (req, res) => {
        const who = requireVerifiedAsn(res);
        const id = intParam(req.params.request_id);
        await cancelRequest(deps, id, who.asn, metadataOf(ctx, req, res));
        const [row] = await portalRows(ctx.pool, who.asn, id);
        res.json(row ?? throwIt(unknownRequest(id)));
      },
    });
}
