import { Type } from '@sinclair/typebox';
import { ApiRouter } from '../shared/routes.js';

/** `GET /control/v1/healthz`: the process answers (no database check; that is `/healthz`). */
export function controlHealthRoutes(): ApiRouter {
  return new ApiRouter('/control/v1').route({
    method: 'get',
    path: '/healthz',
    summary: 'liveness of the control server process',
    responses: { 200: Type.Object({ status: Type.Literal('ok', { description: 'the process answers' }) }) },
    handler: (_req, res) => {
      res.json({ status: 'ok' });
    },
  });
}
