import { expect } from 'chai';
import { expectResponse } from '../../../support/http.js';
import type { Client } from '../agent/telemetry-support.js';

/** A route of a routing-table report; learnt from a peer with RPKI `valid` unless told otherwise. */
export const route = (prefix: string, origin_asn: number | null, as_path: number[], extra: Record<string, unknown> = {}) => ({
  prefix,
  protocol: 'ebgp_beta',
  origin_asn,
  as_path,
  rpki: 'valid',
  local: false,
  ...extra,
});

export type ReportedRoute = ReturnType<typeof route>;

/** Posts a routing table through the real agent endpoint; answers the stored observation id. */
export async function postTable(agent: Client, nodeId: string, captured_at: string, routes: readonly ReportedRoute[], rpki_observed = true): Promise<number> {
  const res = await agent.post('/agent/routing-table', { node_id: nodeId, captured_at, rpki_observed, routes });
  expectResponse(res).status(200);
  expect(res.body).to.include({ accepted: true, node_id: nodeId, routes: routes.length });
  return res.body.observation;
}

/** A 422 with the contract's validation body for a query. */
export async function expect422(client: Client, path: string): Promise<void> {
  const res = await client.get(path);
  expect(res.status, `${path}: ${res.text.slice(0, 200)}`).to.equal(422);
  expect(res.body.detail.message).to.equal('request validation failed');
  expect(res.body.detail.errors).to.be.an('array').that.is.not.empty;
}
