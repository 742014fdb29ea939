import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { expect } from 'chai';
import { createControlApp } from '../../http/control/app.js';
import { createIdentityApp } from '../../http/identity/app.js';
import { createRegistryApp } from '../../http/registry/app.js';
import { operationIdOf } from '../../http/shared/routes.js';
import { issueAgentToken } from '../support/agents.js';
import { api } from '../support/http.js';
import { createTestSystem, startApp, type TestSystem } from '../support/system.js';

const run = promisify(execFile);
const ADMIN = 'openapi-spec-admin-token-0123456789';
const IDENTITY_ADMIN = 'openapi-spec-identity-admin-0123456789';
const SERVICE = 'openapi-spec-service-token-0123456789';

interface Operation {
  operationId?: string;
  responses: Record<string, { content?: Record<string, { schema?: unknown }> }>;
  security?: unknown[];
}
type Document = { paths: Record<string, Record<string, Operation>>; servers?: unknown[]; components?: { schemas?: Record<string, unknown> } };

const SERVICES = [
  { name: 'control', path: '/control/v1/openapi.json', build: createControlApp, token: ADMIN },
  { name: 'identity', path: '/api/v1/openapi.json', build: createIdentityApp, token: IDENTITY_ADMIN },
  { name: 'registry', path: '/registry/v1/openapi.json', build: createRegistryApp, token: SERVICE },
] as const;

function operations(doc: Document): { path: string; method: string; op: Operation }[] {
  return Object.entries(doc.paths).flatMap(([path, methods]) => Object.entries(methods).map(([method, op]) => ({ path, method, op })));
}

describe('OpenAPI documents', function () {
  this.timeout(120_000);
  let sys: TestSystem;
  let dir: string;
  const docs = new Map<string, Document>();
  const urls = new Map<string, string>();
  const closers: (() => Promise<void>)[] = [];

  before(async () => {
    sys = await createTestSystem({ env: { ADMIN_TOKEN: ADMIN, IDENTITY_ADMIN_TOKEN: IDENTITY_ADMIN, REGISTRY_SERVICE_TOKEN: SERVICE } });
    dir = await mkdtemp(join(tmpdir(), 'openapi-'));
    for (const s of SERVICES) {
      const started = await startApp(s.build(sys.context));
      closers.push(started.close);
      urls.set(s.name, started.url);
      const res = await api(started.url).get(s.path);
      expect(res.status).to.equal(200);
      docs.set(s.name, res.body);
    }
  });
  after(async () => {
    for (const close of closers) await close();
    await sys?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('derives an operationId from the method and the path after the service prefix', () => {
    expect(operationIdOf('get', '/control/v1/admin/nodes/{node_id}/peerings')).to.equal('getAdminNodesByNodeIdPeerings');
    expect(operationIdOf('post', '/api/v1/passkeys/login/begin')).to.equal('postPasskeysLoginBegin');
    expect(operationIdOf('get', '/.well-known/jwks.json')).to.equal('getWellKnownJwksJson');
  });

  it('documents the bodies the control server really answers: a walk through nodes, peerings, generations and DNS, then every admin, console and public read of that fleet, validates against the document', async () => {
    const doc = docs.get('control')!;
    const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
    const client = api(urls.get('control')!, { token: ADMIN });
    const templates = Object.keys(doc.paths).map((path) => ({ path, pattern: new RegExp(`^${path.replace(/\{\w+\}/g, '[^/]+')}$`) }));
    const checked: string[] = [];
    const call = async (method: string, path: string, body?: unknown) => {
      const res = await client.send(method, path, { body });
      const template = templates.find((t) => t.pattern.test(path.split('?')[0]))?.path;
      expect(template, path).to.be.a('string');
      const response = doc.paths[template!][method.toLowerCase()].responses[String(res.status)];
      expect(response, `${method} ${path} answered ${res.status}, which is not documented: ${res.text.slice(0, 200)}`).to.be.an('object');
      if (res.status !== 204) {
        const validate = ajv.compile({ ...(response.content!['application/json'].schema as object), components: doc.components });
        expect(validate(res.body), `${method} ${path} ${res.status}: ${ajv.errorsText(validate.errors)}`).to.equal(true);
      }
      checked.push(`${method} ${template} ${res.status}`);
      return res;
    };
    await call('POST', '/control/v1/admin/nodes', {
      node_id: 'walk-a',
      asn: 4242420002,
      router_id: '172.20.1.1',
      site: 'fra',
      ipv4_prefixes: ['172.20.1.0/27'],
      labels: { role: 'edge' },
    });
    await call('POST', '/control/v1/admin/nodes', { node_id: 'walk-a', asn: 4242420002, router_id: '172.20.1.1' });
    await call('POST', '/control/v1/admin/nodes', { node_id: '', asn: 0 });
    await call('GET', '/control/v1/admin/nodes');
    await call('PATCH', '/control/v1/admin/nodes/walk-a', { site: 'ams' });
    await call('GET', '/control/v1/admin/nodes/nobody');
    const provisioned = await call('POST', '/control/v1/admin/nodes/walk-a/peerings/provision', {
      peering: { name: 'peer_1', remote_asn: 4242421234 },
      interface_spec: { name: 'dn42_1234', listen_port: 51801, addresses: ['fe80::1/64'], peer: { endpoint: '198.51.100.7:51820' } },
      bgp_spec: { name: 'peer_1_v6', remote_asn: 4242421234, neighbor_address: 'fe80::1234', interface: 'dn42_1234' },
    });
    expect(provisioned.status, provisioned.text).to.equal(201);
    const peeringId = provisioned.body.peering.id;
    await call('GET', '/control/v1/admin/nodes/walk-a/peerings');
    await call('GET', `/control/v1/admin/peerings/${peeringId}`);
    await call('GET', '/control/v1/admin/nodes/walk-a/peerings/full');
    await call('GET', `/control/v1/admin/peerings/${peeringId}/full`);
    await call('GET', '/control/v1/admin/nodes/walk-a/interfaces');
    await call('GET', '/control/v1/admin/nodes/walk-a/bgp-sessions');
    await call('POST', '/control/v1/admin/nodes/walk-a/peerings/backfill?dry_run=true');
    // Console operator helpers.
    await call('PUT', '/control/v1/ui/nodes/walk-a/route-tuning', { cold_potato_med: 50, route_local_pref: [{ prefix: '172.20.0.0/14', local_pref: 200 }] });
    await call('PUT', '/control/v1/ui/nodes/walk-a/route-tuning', { route_local_pref: [{ prefix: 'nowhere', local_pref: 1 }] });
    await call('GET', '/control/v1/ui/nodes/walk-a/route-tuning');
    await call('PUT', `/control/v1/ui/bgp-sessions/${provisioned.body.bgp_session.id}/link-latency`, { link_latency: 4 });
    await call('PUT', '/control/v1/ui/bgp-sessions/999999/link-latency', { link_latency: 4 });
    await call('GET', '/control/v1/ui/nodes/walk-a/peer-defaults');
    await call('GET', '/control/v1/ui/nodes/walk-a/internal-topology');
    await call('GET', '/control/v1/ui/nodes/nobody/internal-topology');
    await call('GET', '/control/v1/ui/fleet/traffic?range=6h&compare=1');
    await call('GET', '/control/v1/ui/fleet/traffic?range=1h');
    await call('GET', '/control/v1/ui/nodes/walk-a/traffic');
    await call('GET', '/control/v1/ui/nodes/nobody/traffic');
    await call('GET', '/control/v1/admin/nodes/walk-a/traffic');
    await call('GET', '/control/v1/ui/nodes/metrics?range=1h');
    await call('GET', '/control/v1/ui/dashboard?as_traffic=1&range=7d&compare=1');
    await call('GET', '/control/v1/ui/dashboard');
    await call('GET', '/control/v1/ui/dashboard?origins_top=201');
    await call('GET', '/control/v1/admin/nodes/walk-a/desired-state');
    await call('GET', '/control/v1/admin/nodes/walk-a/generations');
    await call('PATCH', '/control/v1/admin/nodes/walk-a', { site: 'fra' });
    await call('GET', '/control/v1/admin/nodes/walk-a/generations/1');
    await call('GET', '/control/v1/admin/nodes/walk-a/generations/2/diff');
    await call('POST', '/control/v1/admin/nodes/walk-a/generations/1/rollback');
    await call('GET', '/control/v1/admin/nodes/walk-a/history?limit=2');
    const group = await call('POST', '/control/v1/admin/dns-groups', { name: 'walk-anycast', bind_addresses: ['172.20.1.53'] });
    await call('GET', '/control/v1/admin/dns-groups');
    const zone = await call('POST', `/control/v1/admin/dns-groups/${group.body.id}/zones`, { zone: 'walk.dn42', primary_ns: 'ns1.walk.dn42' });
    const record = await call('POST', `/control/v1/admin/dns-groups/${group.body.id}/zones/${zone.body.zone.id}/records`, {
      name: 'ns1',
      type: 'A',
      content: '172.20.1.53',
    });
    await call('GET', `/control/v1/admin/dns-groups/${group.body.id}/zones/${zone.body.zone.id}/records`);
    await call('DELETE', `/control/v1/admin/dns-groups/${group.body.id}/zones/${zone.body.zone.id}/records/${record.body.record.id}`);
    await call('PUT', '/control/v1/admin/nodes/walk-a/dns-group', { dns_group_id: group.body.id });
    await call('GET', '/control/v1/admin/agent-releases');
    // Every other read of the control server with no path parameter but a node id, on the walked fleet: whatever it answers is documented and matches.
    const reads = Object.entries(doc.paths)
      .filter(([path, methods]) => methods.get && !path.includes('/agent/') && /^[^{}]*(\{node_id\}[^{}]*)?$/.test(path))
      .filter(([, methods]) => !Object.keys(methods.get.responses['200']?.content ?? {}).includes('text/event-stream'))
      .map(([path]) => path.replace('{node_id}', 'walk-a'));
    expect(reads.length).to.be.above(30);
    for (const path of reads) await call('GET', path);
    await call('POST', '/control/v1/admin/nodes/walk-a/decommission');
    await call('DELETE', `/control/v1/admin/peerings/${peeringId}`);
    expect(checked).to.include.members([
      'POST /control/v1/admin/nodes 201',
      'POST /control/v1/admin/nodes 409',
      'POST /control/v1/admin/nodes 422',
      'GET /control/v1/admin/nodes/{node_id} 404',
    ]);
  });

  for (const s of SERVICES) {
    describe(s.name, () => {
      it('passes redocly lint (recommended rules, redocly.yaml) without errors', async () => {
        const file = join(dir, `${s.name}.json`);
        await writeFile(file, JSON.stringify(docs.get(s.name)));
        const result = await run(join('node_modules', '.bin', 'redocly'), ['lint', '--config', 'redocly.yaml', '--format', 'summary', file], {
          env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
        }).catch((err: { code: number; stdout: string; stderr: string }) => err);
        expect('code' in result ? result.code : 0, `${result.stdout}\n${result.stderr}`).to.equal(0);
      });

      it('gives every operation a unique operationId, a security list and servers', () => {
        const doc = docs.get(s.name)!;
        expect(doc.servers).to.be.an('array').that.is.not.empty;
        const ids = operations(doc).map(({ op }) => op.operationId);
        expect(ids.every((id) => typeof id === 'string' && id.length > 0)).to.equal(true);
        expect(new Set(ids).size).to.equal(ids.length);
        for (const { path, method, op } of operations(doc)) expect(op.security, `${method} ${path}`).to.be.an('array');
      });

      it('gives every status of every operation a response schema (204 and 304 alone have no body)', () => {
        const doc = docs.get(s.name)!;
        const problems: string[] = [];
        for (const { path, method, op } of operations(doc)) {
          for (const [status, response] of Object.entries(op.responses)) {
            const where = `${status} ${method.toUpperCase()} ${path}`;
            const media = Object.entries(response.content ?? {});
            // 204 No Content and 304 Not Modified have no body, by HTTP.
            if (status === '204' || status === '304') {
              if (media.length) problems.push(`${where}: a ${status} has no body`);
              continue;
            }
            if (!media.length) problems.push(`${where}: no response schema (give the route's responses a TypeBox schema for ${status})`);
            for (const [type, { schema }] of media) {
              const body = schema as { $ref?: string; type?: string; properties?: object; additionalProperties?: unknown; allOf?: unknown } | undefined;
              if (!body || typeof body !== 'object') problems.push(`${where} ${type}: no schema`);
              // A placeholder `Type.Object({})` describes nothing.
              else if (
                body.type === 'object' &&
                !body.$ref &&
                !body.allOf &&
                Object.keys(body.properties ?? {}).length === 0 &&
                body.additionalProperties === undefined
              )
                problems.push(`${where} ${type}: an empty object schema`);
            }
          }
        }
        expect(problems, problems.join('\n')).to.deep.equal([]);
      });

      it(`describes every field of ${s.name === 'control' ? 'each shared component' : 'every answer'} (descriptions from the contract)`, () => {
        const doc = docs.get(s.name)!;
        const undescribed: string[] = [];
        const walk = (schema: unknown, where: string): void => {
          if (!schema || typeof schema !== 'object') return;
          if (Array.isArray(schema)) return schema.forEach((item) => walk(item, where));
          const { properties, ...rest } = schema as { properties?: Record<string, { description?: string; $ref?: string }> };
          for (const [name, field] of Object.entries(properties ?? {})) {
            if (!field.description && !field.$ref) undescribed.push(`${where} .${name}`);
            walk(field, `${where} .${name}`);
          }
          for (const value of Object.values(rest)) walk(value, where);
        };
        for (const [name, schema] of Object.entries(doc.components?.schemas ?? {})) walk(schema, `components.schemas.${name}`);
        // The control server's console answers are many and still grow; its shared records are held to it.
        if (s.name !== 'control') {
          for (const { path, method, op } of operations(doc)) {
            for (const [status, response] of Object.entries(op.responses))
              if (Number(status) < 400) walk(response.content, `${status} ${method.toUpperCase()} ${path}`);
          }
        }
        expect(undescribed, undescribed.join('\n')).to.deep.equal([]);
      });

      it('lists every named schema once in components and refers to it', () => {
        const doc = docs.get(s.name)!;
        const text = JSON.stringify(doc);
        for (const match of text.matchAll(/"\$ref":"#\/components\/schemas\/([^"]+)"/g)) expect(doc.components?.schemas, match[1]).to.have.property(match[1]);
      });

      it('describes the body of every error status with a shared schema', () => {
        const doc = docs.get(s.name)!;
        expect(doc.components?.schemas).to.include.keys('Error', 'ValidationError', 'FieldError');
        for (const { path, method, op } of operations(doc)) {
          for (const [status, response] of Object.entries(op.responses)) {
            if (Number(status) < 400) continue;
            expect(response.content?.['application/json']?.schema, `${method} ${path} ${status}`).to.be.an('object');
          }
        }
      });

      it('writes every path as the server serves it: each documented operation is routed for its method', async () => {
        const doc = docs.get(s.name)!;
        const client = api(urls.get(s.name)!, { token: s.token });
        // Agent routes authenticate before routing: they are asked with a real agent token.
        let agentToken: string | undefined;
        if (s.name === 'control') {
          const created = await client.post('/control/v1/admin/nodes', {
            node_id: 'openapi-probe',
            asn: 4242420001,
            router_id: '172.20.0.1',
            ipv4_prefixes: ['172.20.0.0/27'],
          });
          expect(created.status, created.text).to.equal(201);
          agentToken = (await issueAgentToken(urls.get(s.name)!, ADMIN, 'openapi-probe')).token;
        }
        const prefix = s.path.replace('/openapi.json', '');
        for (const { path, method, op } of operations(doc)) {
          if (path !== '/.well-known/jwks.json') expect(path.startsWith(`${prefix}/`), path).to.equal(true);
          // OPTIONS reaches the router without running a handler; Express answers it with the methods routed there (the public CORS front with its preflight).
          const concrete = path.replace(/\{\w+\}/g, '1');
          const agent = (op.security ?? []).some((scheme) => Object.keys(scheme as object).includes('agent'));
          const res = await client.send('OPTIONS', concrete, agent ? { token: agentToken } : {});
          expect(
            res.headers.get('allow') ?? res.headers.get('access-control-allow-methods') ?? '',
            `OPTIONS ${concrete}: ${res.status} ${res.text.slice(0, 100)}`,
          ).to.include(method.toUpperCase());
        }
      });
    });
  }
});
