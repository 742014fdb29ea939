import { NotFound } from '../../../domain/errors.js';
import { RoaSetSchema } from '../../../domain/rpki/roa.js';
import type { RoaSource } from '../../../infra/registry/roa-source.js';
import { answeredNotModified } from '../../shared/conditional.js';
import type { ServiceContext } from '../../shared/context.js';
import { AGENT, AGENT_TAGS, agentRouter } from './router.js';

export const NO_REPLICA = 'no ROA set: no registry replica is attached to this control server';
export const REPLICA_HAS_NO_SET = 'no ROA set: the registry replica has not loaded a commit with ROAs yet';

/**
 * `GET /agent/roas`: the ROA set agents load into BIRD (`bird.rpki`), with an
 * `ETag`; an agent that sends its tag back in `If-None-Match` gets 304 and no
 * body while the set is unchanged. No set is ever made up: without a replica,
 * or before the replica's first load, 404 (the agent keeps the set it has);
 * a replica that cannot be reached and was never read answers 503.
 */
export function agentRoaRoutes(ctx: ServiceContext, source: RoaSource | null) {
  const path = '/agent/roas';
  return agentRouter(ctx, [path], 'token').route({
    method: 'get',
    path,
    summary: 'ROAs derived from the registry route objects, for the ROA tables of BIRD (ETag, If-None-Match)',
    security: AGENT,
    tags: AGENT_TAGS,
    responses: {
      200: RoaSetSchema,
      304: 'If-None-Match names the current set',
      401: 'missing, wrong, expired or revoked agent token',
      404: `${NO_REPLICA}, or ${REPLICA_HAS_NO_SET}`,
      503: 'registry replica unavailable (and no ROA set read from it yet)',
    },
    handler: async (req, res) => {
      if (!source) throw new NotFound(NO_REPLICA);
      const current = await source.current();
      if (!current) throw new NotFound(REPLICA_HAS_NO_SET);
      if (answeredNotModified(req, res, current.etag)) return;
      res.json(current.set);
    },
  });
}
