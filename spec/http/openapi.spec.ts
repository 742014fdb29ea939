import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
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
          const created = await client.post('/control/v1/admin/nodes', { node_id: 'openapi-probe', asn: 4242420001, router_id: '172.20.0.1', ipv4_prefixes: ['172.20.0.0/27'] });
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
          expect(res.headers.get('allow') ?? res.headers.get('access-control-allow-methods') ?? '', `OPTIONS ${concrete}: ${res.status} ${res.text.slice(0, 100)}`).to.include(method.toUpperCase());
        }
      });
    });
  }
});
