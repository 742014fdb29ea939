import { Type } from '@sinclair/typebox';
import type { Request, Response } from 'express';
import type { FleetDeps } from '../../../commands/fleet-write.js';
import { NotFound } from '../../../domain/errors.js';
import type { EventMetadata } from '../../../infra/eventstore/types.js';
import { getNode, type NodeOut } from '../../../projections/fleet/queries.js';
import type { ServiceContext } from '../../shared/context.js';
import { requestMetadata } from '../../shared/metadata.js';

export const ADMIN = ['admin'];
export const TAGS = { nodes: ['nodes'], peerings: ['peerings'], interfaces: ['interfaces and sessions'], generations: ['desired state'] };

/** A sort key of an interface or session (PostgreSQL integer). */
export const SortOrder = Type.Integer({ minimum: -2147483648, maximum: 2147483647 });

export const NodeIdParams = Type.Object({ node_id: Type.String({ minLength: 1, maxLength: 64 }) });
export const IdParam = (name: string) => Type.Object({ [name]: Type.Integer({ minimum: 1, maximum: 2147483647 }) });

export function fleetDeps(ctx: ServiceContext): FleetDeps {
  return {
    store: ctx.store,
    db: ctx.pool,
    doorbell: ctx.doorbell,
    // On KurrentDB the fleet projection runs in the runner: answer only once it has the write.
    settle: ctx.store.transactional ? undefined : () => ctx.projections.catchUp(['fleet']),
  };
}

export function metadataOf(ctx: ServiceContext, req: Request, res: Response): EventMetadata {
  return requestMetadata(req, res, ctx.now());
}

export async function nodeOr404(ctx: ServiceContext, nodeId: string): Promise<NodeOut> {
  const node = await getNode(ctx.pool, nodeId);
  if (!node) throw new NotFound(`unknown node ${nodeId}`);
  return node;
}

/** Path ids arrive as strings; the route schema has checked they are integers. */
export const intParam = (value: unknown): number => Number(value);
