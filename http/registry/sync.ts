import { status } from '../../infra/registry/queries.js';
import { SyncFailed, type RegistrySyncer } from '../../infra/registry/sync.js';
import type { ServiceContext } from '../shared/context.js';
import { HttpError } from '../shared/errors.js';
import { ApiRouter } from '../shared/routes.js';
import { ForceQuery, Status, SyncResult } from './schemas.js';

/** `GET /status` and `POST /sync`. */
export function syncRoutes(ctx: ServiceContext, syncer: RegistrySyncer, prefix: string): ApiRouter {
  return new ApiRouter(prefix)
    .route({
      method: 'get',
      path: '/status',
      summary: 'Loaded commit, objects per class and sync times',
      security: ['service'],
      responses: { 200: Status },
      handler: async (_req, res) => {
        res.json({ enabled: syncer.enabled, ...(await status(ctx.pool)) });
      },
    })
    .route({
      method: 'post',
      path: '/sync',
      summary: 'One sync round (exclusive with the periodic loop across instances)',
      security: ['service'],
      query: ForceQuery,
      responses: {
        200: SyncResult,
        409: 'no source, upstream token missing, or a sync already running',
        502: 'upstream failure or timeout; the replica keeps its data',
      },
      handler: async (req, res) => {
        const force = req.validQuery.force === '1' || req.validQuery.force === 'true';
        try {
          res.json(await syncer.sync({ force, metadata: { actor: String(res.locals.actor ?? 'service'), requestId: String(req.id) } }));
        } catch (err) {
          if (err instanceof SyncFailed) throw new HttpError(502, err.detail);
          throw err;
        }
      },
    });
}
