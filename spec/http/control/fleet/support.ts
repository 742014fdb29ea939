import { createControlApp } from '../../../../http/control/app.js';
import { api } from '../../../support/http.js';
import { createTestSystem, startApp, type TestSystem } from '../../../support/system.js';

export const ADMIN_TOKEN = 'fleet-spec-admin-token-0123456789';

export type Client = ReturnType<typeof api>;

export interface FleetHarness {
  sys: TestSystem;
  /** The server's origin (for agent clients: `issueAgentToken`). */
  url: string;
  client: Client;
  close(): Promise<void>;
}

/** A control server on a fresh database, with an admin client. */
export async function startFleet(env: Record<string, string> = {}): Promise<FleetHarness> {
  const sys = await createTestSystem({ env: { ADMIN_TOKEN, ...env } });
  const started = await startApp(createControlApp(sys.context));
  return {
    sys,
    url: started.url,
    client: api(`${started.url}/control/v1`, { token: ADMIN_TOKEN }),
    async close() {
      await started.close();
      await sys.close();
    },
  };
}

export const node = (node_id: string, extra: Record<string, unknown> = {}) => ({
  node_id,
  asn: 4242420001,
  router_id: '172.20.0.1',
  site: 'fra',
  loopback_ipv4: '172.20.0.1',
  loopback_ipv6: 'fd42:4242:1::1',
  link_local: 'fe80::1',
  ipv4_prefixes: ['172.20.0.0/27'],
  ipv6_prefixes: ['fd42:4242:1::/48'],
  ...extra,
});

export const wg = (name: string, listen_port: number, extra: Record<string, unknown> = {}) => ({
  name,
  kind: 'wireguard',
  listen_port,
  peer: { public_key: 'wQzQn6qN5m0y0VZ8mY0aQkqf1mN0s2m0oQv0a8m0aE0=', endpoint: 'peer.example.net:51820' },
  peer_link_local: 'fe80::2',
  ...extra,
});

export const bgp = (name: string, remote_asn: number, extra: Record<string, unknown> = {}) => ({
  name,
  remote_asn,
  neighbor_address: 'fe80::2',
  interface: 'dn42_peer',
  ...extra,
});
