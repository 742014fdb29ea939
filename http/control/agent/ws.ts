import type { RawData, WebSocket } from 'ws';
import { offerUpdate } from '../../../commands/releases.js';
import { AgentConnection, type AgentHub } from '../../../infra/agent-hub/hub.js';
import { recordHeartbeat, type AgentHeartbeat } from '../../../infra/telemetry/liveness.js';
import { republishOnAgentVersion } from '../../../commands/fleet-ops/agent-upgrade.js';
import { fleetDeps } from '../fleet/common.js';
import { getNode } from '../../../projections/fleet/queries.js';
import type { ServiceContext } from '../../shared/context.js';
import type { AgentPrincipal } from './auth.js';

/** Close code for a token bound to another node than the path's (document 2, Authentication). */
export const CLOSE_FORBIDDEN = 4403;

/**
 * `WS /agent/ws/{node_id}` after the token resolved: 4403 for another node's
 * token; else the connection joins the hub, receives `hello` and then only
 * doorbells. Upstream, only `heartbeat` is honoured.
 */
export async function acceptAgentChannel(ctx: ServiceContext, hub: AgentHub, nodeId: string, agent: AgentPrincipal, ws: WebSocket): Promise<void> {
  if (agent.node_id !== nodeId) {
    ws.close(CLOSE_FORBIDDEN, 'token is bound to another node');
    return;
  }
  const log = ctx.log.child({ node_id: nodeId, token_id: agent.token_id });
  const connection = new AgentConnection(nodeId, ws);
  let heartbeats = Promise.resolve();
  ws.on('message', (data, isBinary) => {
    const heartbeat = isBinary ? undefined : heartbeatOf(data);
    if (!heartbeat) return; // everything but a heartbeat is ignored
    heartbeats = heartbeats.then(() => onHeartbeat(ctx, nodeId, heartbeat).catch((err) => log.error({ err }, 'agent heartbeat not recorded')));
  });
  ws.on('close', () => hub.unregister(connection));

  await hub.register(connection);
  // The agent may have gone while its presence row was written: its close event
  // unregistered it (the hub removes the row after the insert); no hello then.
  if (ws.readyState !== ws.OPEN) return;
  const generation = (await getNode(ctx.pool, nodeId))?.current_generation ?? 0;
  connection.start(JSON.stringify({ type: 'hello', node_id: nodeId, ...(generation > 0 ? { generation } : {}) }));
  log.debug({ connection: connection.id }, 'agent connected');
}

async function onHeartbeat(ctx: ServiceContext, nodeId: string, heartbeat: AgentHeartbeat): Promise<void> {
  const { previousVersion: previous } = await recordHeartbeat(ctx.pool, nodeId, heartbeat, ctx.now());
  await offerUpdate(ctx, nodeId, heartbeat.agent_version);
  await republishOnAgentVersion(fleetDeps(ctx), nodeId, previous, heartbeat.agent_version, { actor: `agent:${nodeId}`, recordedAt: ctx.now().toISOString() });
}

const optionalString = (v: unknown): string | null | undefined =>
  v === undefined || v === null ? null : typeof v === 'string' && v.length <= 128 ? v : undefined;

/** A well-formed `{type: 'heartbeat', agent_version?, applied_generation?, apply_status?}`, else undefined. */
export function heartbeatOf(data: RawData): AgentHeartbeat | undefined {
  let message: unknown;
  try {
    message = JSON.parse(data.toString());
  } catch {
    return undefined;
  }
  if (typeof message !== 'object' || message === null || (message as { type?: unknown }).type !== 'heartbeat') return undefined;
  const m = message as Record<string, unknown>;
  const agent_version = optionalString(m.agent_version);
  const apply_status = optionalString(m.apply_status);
  const g = m.applied_generation;
  const applied_generation = g === undefined || g === null ? null : Number.isSafeInteger(g) && (g as number) >= 0 ? (g as number) : undefined;
  if (agent_version === undefined || apply_status === undefined || applied_generation === undefined) return undefined;
  return { agent_version, applied_generation, apply_status };
}
