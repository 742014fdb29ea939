import { NotFound } from '../../domain/errors.js';
import { RoaSetSchema } from '../../domain/rpki/roa.js';
import * as q from '../../infra/registry/queries.js';
import { answeredNotModified } from '../shared/conditional.js';
import type { ServiceContext } from '../shared/context.js';
import { throwIt } from '../shared/errors.js';
import { ApiRouter } from '../shared/routes.js';

export const NO_ROA_SET = 'no ROA set: the registry replica has not loaded a commit with ROAs yet';

/**
 * `GET /roas`: the ROAs of the loaded commit (domain/rpki/roa.ts), with an
 * `ETag`; a matching `If-None-Match` costs one row read and answers 304. Before
 * the first load there is no set (404), never an empty one: an empty set would
 * tell its users that no route is covered.
 */
export function roaRoutes(ctx: ServiceContext, prefix: string): ApiRouter {
  const { pool } = ctx;
  return new ApiRouter(prefix).route({
    method: 'get',
    path: '/roas',
    summary: 'ROAs derived from the route and route6 objects (origin, max-length), with ETag',
    security: ['service'],
    responses: { 200: RoaSetSchema, 304: 'If-None-Match names the current set', 404: NO_ROA_SET },
    handler: async (req, res) => {
      const head = (await q.roaSetHead(pool)) ?? throwIt(new NotFound(NO_ROA_SET));
      if (answeredNotModified(req, res, head.etag)) return;
      const set = (await q.roaSet(pool)) ?? throwIt(new NotFound(NO_ROA_SET));
      res.setHeader('ETag', set.head.etag);
      res.json({ commit: set.head.commit, synced_at: set.head.synced_at, roas: set.roas });
    },
  });
}
