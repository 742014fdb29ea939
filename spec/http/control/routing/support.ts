import { Ajv2020 } from 'ajv/dist/2020.js';
import { expect } from 'chai';
import { expectResponse, type ApiResponse } from '../../../support/http.js';
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

/**
 * Checks answers against the server's own OpenAPI document: the documented
 * response of the path's template and status, validated with the document's
 * components. So the routing schemas (closed objects) describe what is answered.
 */
export async function documentedBy(client: Client, url: string): Promise<(method: string, path: string) => Promise<ApiResponse>> {
  const doc = (await fetch(`${url}/control/v1/openapi.json`).then((r) => r.json())) as {
    paths: Record<string, Record<string, { responses: Record<string, any> }>>;
    components: unknown;
  };
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
  const templates = Object.keys(doc.paths).map((path) => ({ path, pattern: new RegExp(`^${path.replace(/\{\w+\}/g, '[^/]+')}$`) }));
  return async (method, path) => {
    const res = await client.send(method, path);
    const template = templates.find((t) => t.pattern.test(`/control/v1${path.split('?')[0]}`))?.path;
    expect(template, path).to.be.a('string');
    const response = doc.paths[template!][method.toLowerCase()].responses[String(res.status)];
    expect(response, `${method} ${path} answered ${res.status}, which is not documented`).to.be.an('object');
    const validate = ajv.compile({ ...response.content['application/json'].schema, components: doc.components });
    expect(validate(res.body), `${method} ${path} ${res.status}: ${ajv.errorsText(validate.errors)}`).to.equal(true);
    return res;
  };
}
