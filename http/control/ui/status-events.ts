import { Type } from '@sinclair/typebox';
import { NotFound } from '../../../domain/errors.js';
import { leanStatusEvents, statusEventById } from '../../../infra/telemetry/status-events.js';
import { STATUS_EVENT_KINDS } from '../../../infra/telemetry/store.js';
import type { ServiceContext } from '../../shared/context.js';
import { ApiRouter } from '../../shared/routes.js';
import { NodeIdParams, nodeOr404 } from '../fleet/common.js';
import { NullableInteger, NullableString, PageQuery, RowId, TAGS, UNAUTHORIZED } from './schemas.js';

const LeanEvent = {
  id: Type.Integer(),
  kind: Type.String(),
  generation: NullableInteger,
  status: NullableString,
  created_at: Type.String({ format: 'date-time' }),
  drift_count: NullableInteger,
};

/** `/ui/nodes/{node_id}/status-events` (lean rows, newest first, `before_id` cursor) and `/ui/status-events/{event_id}` (the full event). */
export function consoleStatusEventRoutes(ctx: ServiceContext): ApiRouter {
  const common = { method: 'get' as const, tags: TAGS, security: ['admin'] };
  return new ApiRouter('/control/v1')
    .route({
      ...common,
      path: '/ui/nodes/{node_id}/status-events',
      summary: 'status events newest first without payload; page on with before_id = the last id',
      params: NodeIdParams,
      query: Type.Object({ kind: Type.Optional(Type.Union(STATUS_EVENT_KINDS.map((k) => Type.Literal(k)))), ...PageQuery }, { additionalProperties: false }),
      responses: {
        200: Type.Object({ node_id: Type.String(), events: Type.Array(Type.Object(LeanEvent)) }),
        ...UNAUTHORIZED,
        404: 'unknown node <id>',
        422: 'invalid kind, limit or before_id',
      },
      handler: async (req, res) => {
        const node = await nodeOr404(ctx, req.params.node_id);
        const { kind, limit, before_id } = req.validQuery;
        res.json({ node_id: node.node_id, events: await leanStatusEvents(ctx.pool, node.node_id, { kind, limit, beforeId: before_id }) });
      },
    })
    .route({
      ...common,
      path: '/ui/status-events/{event_id}',
      summary: 'one status event with its node and full payload',
      params: Type.Object({ event_id: RowId() }),
      responses: {
        200: Type.Object({ ...LeanEvent, node_id: Type.String(), payload: Type.Unknown() }),
        ...UNAUTHORIZED,
        404: 'unknown status event <id>',
        422: 'invalid event_id',
      },
      handler: async (req, res) => {
        const id = Number(req.params.event_id);
        const event = await statusEventById(ctx.pool, id);
        if (!event) throw new NotFound(`unknown status event ${id}`);
        res.json(event);
      },
    });
}
