import type { Config } from '../../../infra/config.js';
import { registryClient } from '../../../infra/registry/client.js';

/**
 * The one list of the console features this server serves (document 3, session
 * `features`): the console turns screens on by these names, so a name is listed
 * only once its endpoints answer. Adding a feature is one line here, with the
 * requests that prove it is served (`spec/http/control/ui/session.spec.ts` sends
 * each of them and requires an answer other than 404). Endpoints are
 * `METHOD path` under `/control/v1`; `{node_id}` is a node that has reported.
 */
export interface Feature {
  name: string;
  endpoints: readonly string[];
  /** Served only while a registry replica is attached (`REGISTRY_URL`). */
  needsRegistry?: true;
}

export const FEATURES: readonly Feature[] = [
  { name: 'account-login', endpoints: ['POST /auth/login', 'POST /auth/password'] },
  { name: 'audit-cursor', endpoints: ['GET /ui/audit?limit=1&before_id=1'] },
  { name: 'ui-nodes-rich', endpoints: ['GET /ui/nodes'] },
  {
    name: 'bgp-flaps',
    endpoints: ['GET /ui/fleet/bgp-flaps', 'GET /ui/fleet/peering-issues', 'GET /ui/nodes/{node_id}/bgp-flaps', 'GET /ui/nodes/{node_id}/bgp-sessions/status'],
  },
  { name: 'flap-mitigations', endpoints: ['GET /admin/fleet/mitigations'] },
  { name: 'trend-range', endpoints: ['GET /ui/fleet/traffic?range=30d', 'GET /ui/nodes/{node_id}/traffic?range=7d'] },
  { name: 'trend-compare', endpoints: ['GET /ui/fleet/traffic?range=24h&compare=1', 'GET /ui/nodes/{node_id}/traffic?compare=1'] },
  { name: 'ui-nodes-metrics', endpoints: ['GET /ui/nodes/metrics?range=7d'] },
  { name: 'as-traffic', endpoints: ['GET /ui/dashboard?as_traffic=1&range=30d'] },
  { name: 'prefix-flaps', endpoints: ['GET /ui/fleet/prefix-flaps', 'GET /ui/fleet/prefix-flaps?group=prefix&min_score=0&limit=500'] },
  { name: 'flap-peers', endpoints: ['GET /ui/fleet/flap-peers', 'GET /ui/fleet/flap-peers?limit=200'] },
  { name: 'flap-alerts', endpoints: ['GET /ui/fleet/flap-alerts', 'GET /ui/fleet/flap-alerts?active=1&limit=200&before_id=1'] },
  { name: 'flap-stats', endpoints: ['GET /ui/fleet/flap-stats', 'GET /ui/fleet/flap-stats?range=30d'] },
  { name: 'flap-localize', endpoints: ['GET /ui/fleet/prefix-flaps/localize', 'GET /ui/fleet/prefix-flaps?group=prefix'] },
  { name: 'origins-name', endpoints: ['GET /admin/nodes/{node_id}/routing/origins', 'GET /ui/routing/fleet-overview'], needsRegistry: true },
];

/** The feature names this server serves with this configuration (no database lookup). */
export function servedFeatures(config: Config): string[] {
  const replica = registryClient(config).configured;
  return FEATURES.filter((f) => !f.needsRegistry || replica).map((f) => f.name);
}
