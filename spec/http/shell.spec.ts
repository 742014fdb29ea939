import { Type } from '@sinclair/typebox';
import { expect } from 'chai';
import { createControlApp } from '../../http/control/app.js';
import { createIdentityApp } from '../../http/identity/app.js';
import { createRegistryApp } from '../../http/registry/app.js';
import { createServiceApp, finishServiceApp } from '../../http/shared/app.js';
import { auditWrites } from '../../http/shared/audit.js';
import type { ErrorStyle } from '../../http/shared/errors.js';
import { HttpError } from '../../http/shared/errors.js';
import { ApiRouter } from '../../http/shared/routes.js';
import { createPool } from '../../infra/db/pool.js';
import { NotFound, Validation } from '../../domain/errors.js';
import { listAuditEntries } from '../../projections/audit-log/queries.js';
import { api, expectResponse } from '../support/http.js';
import { createTestSystem, startApp, type TestSystem } from '../support/system.js';
import { eventually } from '../support/wait.js';

describe('service shell', () => {
  let sys: TestSystem;
  const closers: (() => Promise<void>)[] = [];
  before(async () => {
    sys = await createTestSystem();
  });
  after(async () => {
    for (const close of closers) await close();
    await sys.close();
  });

  async function serve(app: Parameters<typeof startApp>[0]) {
    const started = await startApp(app);
    closers.push(started.close);
    return api(started.url);
  }

  describe('health', () => {
    for (const [name, build] of [
      ['control', createControlApp],
      ['identity', createIdentityApp],
      ['registry', createRegistryApp],
    ] as const) {
      it(`${name}: /healthz answers ok while the database is up`, async () => {
        const client = await serve(build(sys.context));
        const res = await client.get('/healthz');
        expectResponse(res).status(200).body({ status: 'ok', database: 'up' });
      });

      it(`${name}: /healthz answers 503 while the database is down`, async () => {
        const deadPool = createPool('postgres://nobody@127.0.0.1:1/none', 1);
        closers.push(() => deadPool.end());
        const client = await serve(build({ ...sys.context, pool: deadPool }));
        const res = await client.get('/healthz');
        expect(res.status).to.equal(503);
        expect(res.body).to.deep.equal({ status: 'unavailable', database: 'down' });
      });
    }

    it('control: /control/v1/healthz answers without touching the database', async () => {
      const deadPool = createPool('postgres://nobody@127.0.0.1:1/none', 1);
      closers.push(() => deadPool.end());
      const client = await serve(createControlApp({ ...sys.context, pool: deadPool }));
      const res = await client.get('/control/v1/healthz');
      expect(res.status).to.equal(200);
      expect(res.body).to.deep.equal({ status: 'ok' });
    });
  });

  describe('OpenAPI documents', () => {
    for (const [path, build] of [
      ['/control/v1/openapi.json', createControlApp],
      ['/api/v1/openapi.json', createIdentityApp],
      ['/registry/v1/openapi.json', createRegistryApp],
    ] as const) {
      it(`serves ${path} as OpenAPI 3.1`, async () => {
        const res = await (await serve(build(sys.context))).get(path);
        expect(res.status).to.equal(200);
        expect(res.body.openapi).to.equal('3.1.0');
        expect(res.body.paths).to.be.an('object');
      });
    }

    it('describes a route from the same schema that validates it', async () => {
      const res = await (await serve(createControlApp(sys.context))).get('/control/v1/openapi.json');
      expect(res.body.paths['/control/v1/healthz'].get.responses['200'].content['application/json'].schema).to.deep.equal({
        type: 'object',
        required: ['status'],
        properties: { status: { const: 'ok', type: 'string', description: 'the process answers' } },
      });
    });
  });

  describe('validation and errors', () => {
    const Body = Type.Object({ asn: Type.Integer({ minimum: 1 }), name: Type.String({ minLength: 1, maxLength: 64 }) }, { additionalProperties: false });

    function probeApp(style: ErrorStyle) {
      const app = createServiceApp('probe', sys.log);
      const router = new ApiRouter()
        .route({
          method: 'post',
          path: '/things',
          summary: 'create',
          body: Body,
          responses: { 201: 'created' },
          handler: (req, res) => void res.status(201).json({ got: req.body }),
        })
        .route({
          method: 'get',
          path: '/things',
          summary: 'list',
          query: Type.Object({ limit: Type.Integer({ minimum: 1, maximum: 500, default: 50 }) }),
          responses: { 200: 'list' },
          handler: (req, res) => void res.json({ limit: req.validQuery.limit }),
        })
        .route({
          method: 'get',
          path: '/missing/{id}',
          summary: 'nf',
          responses: {},
          handler: (req) => Promise.reject(new NotFound(`unknown thing ${req.params.id}`)),
        })
        .route({ method: 'get', path: '/rule', summary: 'rule', responses: {}, handler: () => Promise.reject(new Validation('invalid prefix: 10.0.0.1/33')) })
        .route({
          method: 'get',
          path: '/http',
          summary: 'http',
          responses: {},
          handler: () => Promise.reject(new HttpError(400, 'captcha verification failed')),
        })
        .route({ method: 'get', path: '/boom', summary: 'boom', responses: {}, handler: () => Promise.reject(new Error('secret internals')) });
      app.use(router.router);
      return finishServiceApp(app, style, sys.log);
    }

    it('control: a bad body is 422 {detail: {message, errors[]}} with the field locations', async () => {
      const client = await serve(probeApp('control'));
      const res = await client.post('/things', { asn: 0, extra: true });
      expect(res.status).to.equal(422);
      expect(res.body.detail.message).to.equal('request validation failed');
      const locs = res.body.detail.errors.map((e: { loc: unknown[] }) => e.loc.join('.'));
      expect(locs).to.include.members(['body.asn', 'body.name', 'body.extra']);
      for (const e of res.body.detail.errors) expect(e).to.have.keys('loc', 'msg', 'type');
    });

    it('identity: a bad body is 422 with detail as an array, error and fatal', async () => {
      const client = await serve(probeApp('identity'));
      const res = await client.post('/things', { asn: 'x', name: 'n' });
      expect(res.status).to.equal(422);
      expect(res.body.detail).to.be.an('array').with.length(1);
      expect(res.body.detail[0].loc).to.deep.equal(['body', 'asn']);
      expect(res.body).to.include({ error: 'invalid_request', fatal: false });
    });

    it('accepts a valid body and coerces and defaults query parameters', async () => {
      const client = await serve(probeApp('control'));
      expectResponse(await client.post('/things', { asn: 4242420000, name: 'x' }))
        .status(201)
        .body({ got: { asn: 4242420000, name: 'x' } });
      expect((await client.get('/things?limit=7')).body).to.deep.equal({ limit: 7 });
      expect((await client.get('/things')).body).to.deep.equal({ limit: 50 });
      const bad = await client.get('/things?limit=0');
      expect(bad.status).to.equal(422);
      expect(bad.body.detail.errors[0].loc).to.deep.equal(['query', 'limit']);
    });

    it('answers malformed JSON with 422 in the control style', async () => {
      const client = await serve(probeApp('control'));
      const res = await client.post('/things', '{"asn": ');
      expect(res.status).to.equal(422);
      expect(res.body.detail.message).to.equal('invalid JSON body');
    });

    it('maps domain errors to the contract status and detail text', async () => {
      const control = await serve(probeApp('control'));
      expect((await control.get('/missing/n1')).body).to.deep.equal({ detail: 'unknown thing n1' });
      expect((await control.get('/missing/n1')).status).to.equal(404);
      const rule = await control.get('/rule');
      expect(rule.status).to.equal(422);
      expect(rule.body).to.deep.equal({ detail: { message: 'invalid prefix: 10.0.0.1/33', errors: [] } });
      const http = await control.get('/http');
      expect([http.status, http.body]).to.deep.equal([400, { detail: 'captcha verification failed' }]);
      const identity = await serve(probeApp('identity'));
      expect((await identity.get('/missing/n1')).body).to.deep.equal({ detail: 'unknown thing n1', error: 'not_found', fatal: false });
    });

    it('answers unexpected failures with 500 and no internals', async () => {
      const client = await serve(probeApp('control'));
      const res = await client.get('/boom');
      expect(res.status).to.equal(500);
      expect(res.text).not.to.contain('secret');
      expect(res.body).to.deep.equal({ detail: 'internal server error' });
    });

    it('echoes a sane X-Request-Id and makes one otherwise', async () => {
      const client = await serve(probeApp('control'));
      expect((await client.get('/things', { headers: { 'x-request-id': 'abc-123' } })).headers.get('x-request-id')).to.equal('abc-123');
      expect((await client.get('/things', { headers: { 'x-request-id': 'bad id with spaces' } })).headers.get('x-request-id')).to.match(/^[0-9a-f-]{36}$/);
    });
  });

  describe('audit plumbing', () => {
    it('records every write request with its final status, refused ones included, and no reads', async () => {
      const app = createServiceApp('probe', sys.log, { trustedProxies: sys.config.trustedProxies });
      app.use('/admin', auditWrites(sys.context));
      app.post('/admin/locked', (_req, res) => void res.status(401).json({ detail: 'not authenticated' }));
      app.delete('/admin/things/:id', (_req, res) => {
        res.locals.actor = 'alice';
        res.status(204).end();
      });
      app.get('/admin/things', (_req, res) => void res.json([]));
      const client = await serve(finishServiceApp(app, 'control', sys.log));
      await client.post('/admin/locked?x=1', { password: 'never-logged' }, { headers: { 'x-forwarded-for': '192.0.2.7, 10.0.0.1' } });
      // Entries are ordered by request time; audit writes run in the background and may land in any order.
      sys.clock.advance(1000);
      await client.delete('/admin/things/7');
      await client.get('/admin/things');
      const entries = await eventually(
        async () => {
          const listed = await listAuditEntries(sys.pool, 100);
          return listed.length >= 2 && listed;
        },
        { what: 'two audit entries' },
      );
      expect(entries.map((e) => [e.method, e.path, e.status_code, e.actor])).to.deep.equal([
        ['DELETE', '/admin/things/7', 204, 'alice'],
        ['POST', '/admin/locked', 401, 'anonymous@192.0.2.7'],
      ]);
      const events = await sys.store.readAll(undefined, 100);
      expect(events.every((e) => e.streamId === `audit-${sys.clock.now().toISOString().slice(0, 10)}`)).to.equal(true);
      expect(JSON.stringify(events.map((e) => [e.data, e.metadata]))).not.to.contain('never-logged');
    });

    it('writes the entries recorded after the response in the order the responses finished, even when the first append is slow', async () => {
      let open!: () => void;
      const gate = new Promise<void>((resolve) => (open = resolve));
      let appends = 0;
      const store = Object.create(sys.store) as typeof sys.store;
      store.append = async (...args: Parameters<typeof sys.store.append>) => {
        if (appends++ === 0) await gate;
        return sys.store.append(...args);
      };
      const ctx = { ...sys.context, store };
      const app = createServiceApp('probe', sys.log, { trustedProxies: sys.config.trustedProxies });
      app.use('/admin', auditWrites(ctx));
      app.put('/admin/order/:n', (req, res) => {
        res.locals.actor = `writer-${req.params.n}`;
        res.status(200).json({});
      });
      const client = await serve(finishServiceApp(app, 'control', sys.log));
      await client.put('/admin/order/1', {});
      await client.put('/admin/order/2', {});
      open();
      await ctx.background.drain();
      const entries = (await listAuditEntries(sys.pool, 100)).filter((e) => e.path.startsWith('/admin/order/'));
      expect(entries.map((e) => e.actor)).to.deep.equal(['writer-2', 'writer-1']); // newest first
      expect(entries[0].id).to.be.greaterThan(entries[1].id);
    });
  });
});
