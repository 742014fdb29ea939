import { Type } from '@sinclair/typebox';
import { setAutopeeringPolicy } from '../../../commands/autopeering-policy.js';
import type { FleetDeps } from '../../../commands/fleet-write.js';
import { AutopeeringPolicyInSchema } from '../../../domain/autopeering/policy.js';
import type { PolicyChange } from '../../../domain/autopeering/policy-decide.js';
import { NotFound } from '../../../domain/errors.js';
import { getPolicy, listPolicies } from '../../../projections/autopeering/queries.js';
import type { ServiceContext } from '../../shared/context.js';
import { throwIt } from '../../shared/errors.js';
import type { ApiRouter } from '../../shared/routes.js';
import { ADMIN, fleetDeps, metadataOf, NodeIdParams } from '../fleet/common.js';
import { PolicyRowSchema } from './schemas.js';

const TAGS = ['autopeering'];

/** The policy write's dependencies: on KurrentDB the answer waits for the `autopeering` read model. */
function policyDeps(ctx: ServiceContext): FleetDeps {
  return { ...fleetDeps(ctx), settle: ctx.store.transactional ? undefined : () => ctx.projections.catchUp(['autopeering']) };
}

/** `GET /admin/autopeering/nodes`, `PUT` and `PATCH /admin/autopeering/nodes/{node_id}`. */
export function policyRoutes(r: ApiRouter, ctx: ServiceContext): void {
  const deps = policyDeps(ctx);
  r.route({
    method: 'get',
    path: '/admin/autopeering/nodes',
    summary: "every node's autopeering policy (defaults where none was set) and its count of provisioned requests, ordered by node_id",
    security: ADMIN,
    tags: TAGS,
    responses: { 200: Type.Object({ nodes: Type.Array(PolicyRowSchema) }) },
    handler: async (_req, res) => {
      res.json({ nodes: await listPolicies(ctx.pool) });
    },
  });

  for (const [method, kind, summary] of [
    ['put', 'replace', 'replace the policy; omitted fields return to their defaults'],
    ['patch', 'patch', 'change only the given fields of the policy'],
  ] as const) {
    r.route({
      method,
      path: '/admin/autopeering/nodes/{node_id}',
      summary,
      security: ADMIN,
      tags: TAGS,
      params: NodeIdParams,
      body: AutopeeringPolicyInSchema,
      responses: { 200: PolicyRowSchema, 404: 'unknown node <id>', 422: 'invalid field' },
      handler: async (req, res) => {
        const nodeId = req.params.node_id;
        const change: PolicyChange = { kind, policy: req.body };
        await setAutopeeringPolicy(deps, nodeId, change, metadataOf(ctx, req, res));
        res.json((await getPolicy(ctx.pool, nodeId)) ?? throwIt(new NotFound(`unknown node ${nodeId}`)));
      },
    });
  }
}
