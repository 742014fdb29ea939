import { createControlApp } from '../../../../http/control/app.js';
import { issueAgentToken } from '../../../support/agents.js';
import { api, expectResponse } from '../../../support/http.js';
import { createTestSystem, startApp, type TestSystem } from '../../../support/system.js';
import { ADMIN_TOKEN, node } from '../fleet/support.js';

export type Client = ReturnType<typeof api>;

/** A control server with nodes and one agent token per node: admin client, agent clients by node. */
export interface AgentHarness {
  sys: TestSystem;
  url: string;
  admin: Client;
  agent: Record<string, Client>;
  close(): Promise<void>;
}

export async function startAgents(nodeIds: readonly string[], env: Record<string, string> = {}): Promise<AgentHarness> {
  const sys = await createTestSystem({ env: { ADMIN_TOKEN, ...env } });
  const started = await startApp(createControlApp(sys.context));
  const admin = api(`${started.url}/control/v1`, { token: ADMIN_TOKEN });
  const agent: Record<string, Client> = {};
  for (const id of nodeIds) {
    expectResponse(await admin.post('/admin/nodes', node(id))).status(201);
    const { token } = await issueAgentToken(started.url, ADMIN_TOKEN, id);
    agent[id] = api(`${started.url}/control/v1`, { token });
  }
  return {
    sys,
    url: started.url,
    admin,
    agent,
    async close() {
      await started.close();
      await sys.close();
    },
  };
}

export const anonymous = (h: AgentHarness): Client => api(`${h.url}/control/v1`);

const KEY = 'cQzQn6qN5m0y0VZ8mY0aQkqf1mN0s2m0oQv0a8m0aE0=';

/** A runtime snapshot with the given BGP session states. */
export function snapshot(nodeId: string, sessions: Record<string, string> = { p1: 'established', p2: 'established' }, extra: Record<string, unknown> = {}) {
  return {
    node_id: nodeId,
    generation: 1,
    captured_at: '2026-11-01T12:00:00Z',
    containers: [
      { name: 'bird', state: 'running', image: 'bird:2.15' },
      { name: 'wireguard', state: 'running' },
    ],
    interfaces: [
      { name: 'dn42_p1', up: true, mtu: 1420, rx_bytes: 1000, tx_bytes: 2000 },
      { name: 'dn42_p2', up: true, rx_bytes: 10, tx_bytes: 20 },
      { name: 'eth0', up: true, rx_bytes: 5, tx_bytes: 6 },
    ],
    wireguard_interfaces: [
      {
        name: 'dn42_p1',
        public_key: KEY,
        listen_port: 51801,
        peers: [{ public_key: KEY, endpoint: '192.0.2.1:51820', latest_handshake_at: '2026-11-01T11:59:00Z', rx_bytes: 1000, tx_bytes: 2000 }],
      },
    ],
    bgp_protocols: Object.entries(sessions).map(([name, state]) => ({
      name,
      state,
      since: '2026-11-01T10:00:00Z',
      remote_asn: 4242420002,
      routes_imported: 10,
      routes_exported: 5,
    })),
    self_metrics: {
      cpu: 1.5,
      rss: 50_000_000,
      total_failures: 0,
      log_warning_count: 2,
      log_error_count: 0,
      last_error_at: null,
      last_error_message: null,
    },
    ...extra,
  };
}

export const applyResult = (nodeId: string, status = 'succeeded', generation = 1) => ({
  node_id: nodeId,
  generation,
  status,
  started_at: '2026-11-01T12:00:00Z',
  finished_at: '2026-11-01T12:00:05Z',
  error: status === 'succeeded' ? null : 'bird: syntax error',
});

export const reconciliation = (nodeId: string, status = 'drift') => ({
  node_id: nodeId,
  generation: 1,
  captured_at: '2026-11-01T12:00:00Z',
  status,
  drift_items:
    status === 'drift'
      ? [
          { kind: 'wireguard', name: 'dn42_p1', detail: 'listen port differs' },
          { kind: 'bird', name: 'p2', detail: null },
        ]
      : [],
});
