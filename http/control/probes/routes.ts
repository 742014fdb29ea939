import { Type } from '@sinclair/typebox';
import { startJob } from '../../../commands/jobs.js';
import type { JobKind, JobSpec } from '../../../domain/probes/jobs.js';
import { LogSpecInput, ProbeSpecInput, logSpec, probeSpec } from '../../../domain/probes/spec.js';
import type { ServiceContext } from '../../shared/context.js';
import { ApiRouter, component } from '../../shared/routes.js';
import { streamJob } from './stream.js';

const NodeId = Type.String({ minLength: 1, maxLength: 64 });
const StreamParams = (name: string) => Type.Object({ [name]: Type.String({ minLength: 1, maxLength: 128 }) });
const SSE = 'text/event-stream; buffered messages first, then live ones; ends after `done`, or without it when the job timed out';
/** A Server-Sent Events stream is text: `event:` and `data:` lines, the data JSON. */
const SseStream = Type.String({ description: 'Server-Sent Events: `event: <name>` and `data: <JSON>` lines' });
// The probe tools have a name in the document: the console's tool picker is typed by it.
component('ProbeTool', ProbeSpecInput.properties.tool);

/**
 * `/control/v1/ui/probes` and `/ui/logs` (admin Bearer via the `/ui` guard): start
 * a job on a node's agent and stream what it sends back.
 */
export function probeRoutes(ctx: ServiceContext): ApiRouter {
  const start = (kind: JobKind, nodeId: string, spec: JobSpec) => startJob(ctx, kind, nodeId, spec);
  return new ApiRouter('/control/v1')
    .route({
      method: 'post',
      path: '/ui/probes',
      summary: 'Start a ping, mtr, traceroute or MTU probe on a node',
      tags: ['probes'],
      security: ['admin'],
      body: Type.Object({ node_id: NodeId, spec: ProbeSpecInput }, { additionalProperties: false }),
      responses: {
        202: Type.Object({ probe_id: Type.String() }),
        404: 'unknown node',
        409: '`node <id> has no connected agent`',
        422: 'invalid spec (`invalid target <x>` outside the dn42, private and link-local ranges)',
        429: 'more than 256 running probe and log jobs, or 3 on the node',
      },
      handler: async (req, res) => {
        res.status(202).json({ probe_id: await start('probe', req.body.node_id, probeSpec(req.body.spec)) });
      },
    })
    .route({
      method: 'get',
      path: '/ui/probes/{probe_id}/stream',
      summary: 'Server-Sent Events of a probe: `output`, then `done`',
      tags: ['probes'],
      security: ['admin'],
      params: StreamParams('probe_id'),
      responses: { 200: { mediaType: 'text/event-stream', schema: SseStream, description: SSE }, 404: 'unknown or expired probe' },
      handler: (req, res) => streamJob(ctx, 'probe', req.params.probe_id as string, req, res),
    })
    .route({
      method: 'post',
      path: '/ui/logs',
      summary: "View a node agent's log: a snapshot or a tail",
      tags: ['probes'],
      security: ['admin'],
      body: Type.Object({ node_id: NodeId, spec: LogSpecInput }, { additionalProperties: false }),
      responses: {
        202: Type.Object({ log_id: Type.String() }),
        404: 'unknown node',
        409: '`node <id> has no connected agent`',
        422: 'invalid spec (`invalid source journal: tail supports only buffer`)',
        429: 'more than 256 running probe and log jobs, or 3 on the node (shared with probes)',
      },
      handler: async (req, res) => {
        res.status(202).json({ log_id: await start('log', req.body.node_id, logSpec(req.body.spec)) });
      },
    })
    .route({
      method: 'get',
      path: '/ui/logs/{log_id}/stream',
      summary: 'Server-Sent Events of a log view: `logentries` batches, then `done`',
      tags: ['probes'],
      security: ['admin'],
      params: StreamParams('log_id'),
      responses: { 200: { mediaType: 'text/event-stream', schema: SseStream, description: SSE }, 404: 'unknown or expired log view' },
      handler: (req, res) => streamJob(ctx, 'log', req.params.log_id as string, req, res),
    });
}
