import { expect } from 'chai';
import { api } from './http.js';

/**
 * Issues an agent token for `nodeId` through the real admin endpoint
 * (`POST /control/v1/admin/nodes/{node_id}/agent-tokens`). `baseUrl` is the
 * server's origin (with or without the `/control/v1` prefix).
 */
export async function issueAgentToken(baseUrl: string, adminToken: string, nodeId: string, body: object = {}): Promise<{ token: string; token_id: string }> {
  const root = baseUrl.replace(/\/+$/, '').replace(/\/control\/v1$/, '');
  const res = await api(`${root}/control/v1`, { token: adminToken }).post(`/admin/nodes/${encodeURIComponent(nodeId)}/agent-tokens`, body);
  expect(res.status, `issue agent token: ${res.text}`).to.equal(201);
  const token = res.body.token as string;
  return { token, token_id: token.slice(0, token.indexOf('.')) };
}

/** `Authorization` header for an agent token. */
export const agentAuth = (token: string): Record<string, string> => ({ authorization: `Bearer ${token}` });
