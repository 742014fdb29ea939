import { agentSocket } from '../../../support/agent-socket.js';
import { issueAgentToken } from '../../../support/agents.js';
import { expectResponse } from '../../../support/http.js';
import { eventually } from '../../../support/wait.js';
import { snapshot, type AgentHarness } from '../agent/telemetry-support.js';
import { ADMIN_TOKEN } from '../fleet/support.js';

/** WireGuard public keys of peers (base64 of 32 bytes). */
export const KEY_A = 'wQzQn6qN5m0y0VZ8mY0aQkqf1mN0s2m0oQv0a8m0aE0=';
export const KEY_B = 'cQzQn6qN5m0y0VZ8mY0aQkqf1mN0s2m0oQv0a8m0aE0=';

/** Sets the server's clock (the test clock) and answers it as ISO text, the agent's `captured_at`. */
export function at(h: AgentHarness, iso: string): string {
  h.sys.clock.current = new Date(iso);
  return new Date(iso).toISOString();
}

/** A runtime snapshot through the agent endpoint, captured now (server clock), archives written. */
export async function postSnapshot(h: AgentHarness, nodeId: string, extra: Record<string, unknown> = {}, sessions?: Record<string, string>): Promise<void> {
  const body = snapshot(nodeId, sessions, { captured_at: h.sys.clock.now().toISOString(), ...extra });
  expectResponse(await h.agent[nodeId].post('/agent/runtime-snapshot', body)).status(200);
  await h.sys.context.background.drain();
}

/** A 30 s light traffic sample through the agent endpoint, captured now. */
export async function postTraffic(
  h: AgentHarness,
  nodeId: string,
  peers: { interface: string; public_key?: string; rx_bytes: number; tx_bytes: number }[],
): Promise<void> {
  expectResponse(await h.agent[nodeId].post('/agent/wireguard-traffic', { node_id: nodeId, captured_at: h.sys.clock.now().toISOString(), peers })).status(200);
}

/** A heartbeat over the agent's WebSocket (what the liveness registry records), waited for until the server has it. */
export async function heartbeat(h: AgentHarness, nodeId: string, agentVersion: string): Promise<void> {
  const { token } = await issueAgentToken(h.url, ADMIN_TOKEN, nodeId);
  const socket = agentSocket(h.url, `ws/${nodeId}`, token);
  try {
    await socket.next('hello');
    socket.send({ type: 'heartbeat', agent_version: agentVersion, applied_generation: 1, apply_status: 'succeeded' });
    const expected = h.sys.clock.now().toISOString();
    await eventually(
      async () => {
        const row = (await h.admin.get('/admin/health')).body.nodes.find((n: { node_id: string }) => n.node_id === nodeId);
        return row.agent_version === agentVersion && row.last_heartbeat_at === expected;
      },
      { timeoutMs: 15_000, what: `heartbeat of ${nodeId}` },
    );
  } finally {
    await socket.close();
  }
}

export const byId = (rows: { node_id: string }[]): Record<string, Record<string, any>> => Object.fromEntries(rows.map((r) => [r.node_id, r]));
