import type { Request } from 'express';
import { Type } from '@sinclair/typebox';
import { NotFound } from '../../../domain/errors.js';
import { publishedHeads, type PublishedHead } from '../../../projections/fleet/queries.js';
import { batchedReads } from '../../shared/batch.js';
import { answeredNotModified } from '../../shared/conditional.js';
import type { ServiceContext } from '../../shared/context.js';
import { AGENT, AGENT_TAGS, agentNode, agentRouter } from './router.js';

/**
 * The entity tag of a node's published generation: its number and its creation
 * instant (milliseconds, base 36), e.g. `"42-m1x2k3l4"`. The number alone would
 * do while generations are append-only; the instant keeps a tag from matching
 * another document with the same number (a database restored to an earlier
 * point that then published again). Strong: the body of one generation is the
 * same bytes every time (docs/decisions.md, "Desired-state ETag").
 */
export function desiredStateEtag(head: Pick<PublishedHead, 'generation' | 'created_at'>): string {
  return `"${head.generation}-${new Date(head.created_at).getTime().toString(36)}"`;
}

/** The generation an `If-None-Match` names (the first of our tags in it), else null. */
export function generationNamed(req: Request): number | null {
  const header = req.headers['if-none-match'];
  if (!header) return null;
  for (const tag of header.split(',')) {
    const m = /^\s*(?:W\/)?"(\d{1,9})-[0-9a-z]+"\s*$/.exec(tag);
    if (m) return Number(m[1]);
  }
  return null;
}

/** The 200 body, spliced around the state's JSON text as PostgreSQL gave it (no parse, no re-serialisation). */
function documentJson(nodeId: string, head: PublishedHead, stateJson: string): string {
  const created = new Date(head.created_at).toISOString();
  return `{"node_id":${JSON.stringify(nodeId)},"generation":${head.generation},"reason":${JSON.stringify(head.reason)},"created_at":"${created}","state":${stateJson}}`;
}

/**
 * `GET /agent/desired-state`: the token node's published desired state. A GET has
 * no body, so `node_id` comes as an optional query parameter; given, it must be
 * the token's node (403), absent, the token's node is meant. Conditional: the
 * answer carries an `ETag` naming the generation, and an `If-None-Match` that
 * names the current one is answered 304 without reading the document (the
 * doorbell fan-out's unchanged nodes cost one indexed read each).
 */
export function agentDesiredStateRoutes(ctx: ServiceContext) {
  const path = '/agent/desired-state';
  // Concurrent pulls (a fleet-wide write rings every agent at once) share their reads.
  const head = batchedReads((wanted: readonly { nodeId: string; known: number | null }[]) => publishedHeads(ctx.pool, wanted));
  return agentRouter(ctx, [path], 'query').route({
    method: 'get',
    path,
    summary: "the token node's published desired state with its generation (ETag, If-None-Match)",
    security: AGENT,
    tags: AGENT_TAGS,
    query: Type.Object({ node_id: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })) }, { additionalProperties: false }),
    responses: {
      200: Type.Object({ node_id: Type.String(), generation: Type.Integer(), reason: Type.String(), created_at: Type.String(), state: Type.Object({}) }),
      304: 'If-None-Match names the current generation',
      401: 'missing, wrong, expired or revoked agent token',
      403: 'node_id is not the token node',
      404: 'no desired state for node <id>',
    },
    handler: async (req, res) => {
      const nodeId = agentNode(res);
      let current = await head({ nodeId, known: generationNamed(req) });
      if (!current) throw new NotFound(`no desired state for node ${nodeId}`);
      if (answeredNotModified(req, res, desiredStateEtag(current))) return;
      // Same number, other document (see desiredStateEtag): read it whole.
      if (current.state_json === null) current = (await head({ nodeId, known: null }))!;
      res.setHeader('ETag', desiredStateEtag(current));
      res.type('application/json').send(documentJson(nodeId, current, current.state_json!));
    },
  });
}
