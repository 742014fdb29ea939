import { expect } from 'chai';
import { createControlApp } from '../../../http/control/app.js';
import { PROVISION_BODY_LIMIT_BYTES, NODE_BODY_LIMIT_BYTES } from '../../../http/control/fleet/body-limits.js';
import { PREFIX_BODY_LIMIT_BYTES } from '../../../http/control/fleet-ops/schemas.js';
import { DNS_GROUP_BODY_LIMIT_BYTES } from '../../../http/control/dns/groups.js';
import { createIdentityApp } from '../../../http/identity/app.js';
import { SUBMIT_BODY_LIMIT_BYTES } from '../../../http/identity/verification-schemas.js';
import { createRegistryApp } from '../../../http/registry/app.js';
import { DEFAULT_BODY_LIMIT_BYTES, KiB } from '../../../http/shared/body-limit.js';
import { api, type ApiResponse } from '../../support/http.js';
import { createTestSystem, startApp, type TestSystem } from '../../support/system.js';

const ADMIN_TOKEN = 'body-limit-spec-admin-token-0123456789';
const IDENTITY_ADMIN_TOKEN = 'body-limit-spec-identity-admin-0123456789';
const SERVICE_TOKEN = 'body-limit-spec-registry-token-0123456789';

/** A JSON object of exactly `bytes` bytes: `{"pad":"xxx…"}`, which every body schema refuses with 422 (an unknown field, required fields missing). */
function paddedBody(bytes: number): string {
  const text = JSON.stringify({ pad: 'x'.repeat(bytes - JSON.stringify({ pad: '' }).length) });
  expect(Buffer.byteLength(text)).to.equal(bytes);
  return text;
}

type Style = 'control' | 'identity';

/** Parsed: the route got as far as validating the body (422 in the service's style), so it was not refused for its size. */
function expectParsed(res: ApiResponse, style: Style): void {
  expect(res.status, res.text.slice(0, 300)).to.equal(422);
  const errors = style === 'control' ? res.body.detail.errors : res.body.detail;
  expect(errors.length).to.be.above(0);
  for (const e of errors as { loc: unknown[] }[]) expect(e.loc[0]).to.equal('body');
}

function expectTooLarge(res: ApiResponse, style: Style): void {
  expect(res.status, res.text.slice(0, 300)).to.equal(413);
  expect(res.body).to.deep.equal(
    style === 'control' ? { detail: 'request body too large' } : { detail: 'request body too large', error: 'invalid_request', fatal: false },
  );
}

describe('per-route JSON body limits: a body at the limit is parsed, one byte more is 413 before parsing', function () {
  this.timeout(180_000);
  let sys: TestSystem;
  let servers: Awaited<ReturnType<typeof startApp>>[];
  let control: ReturnType<typeof api>;
  let identity: ReturnType<typeof api>;
  let registry: ReturnType<typeof api>;

  before(async () => {
    sys = await createTestSystem({ env: { ADMIN_TOKEN, IDENTITY_ADMIN_TOKEN, REGISTRY_SERVICE_TOKEN: SERVICE_TOKEN } });
    servers = await Promise.all([createControlApp(sys.context), createIdentityApp(sys.context), createRegistryApp(sys.context)].map((app) => startApp(app)));
    [control, identity, registry] = servers.map((s) => api(s.url));
  });
  after(async () => {
    await Promise.all((servers ?? []).map((s) => s.close()));
    await sys?.close();
  });

  const cases: { name: string; style: Style; limit: number; send: (body: string) => Promise<ApiResponse> }[] = [
    { name: 'control login (default)', style: 'control', limit: DEFAULT_BODY_LIMIT_BYTES, send: (b) => control.post('/control/v1/auth/login', b) },
    {
      name: 'control node create',
      style: 'control',
      limit: NODE_BODY_LIMIT_BYTES,
      send: (b) => control.post('/control/v1/admin/nodes', b, { token: ADMIN_TOKEN }),
    },
    {
      name: 'control provision',
      style: 'control',
      limit: PROVISION_BODY_LIMIT_BYTES,
      send: (b) => control.post('/control/v1/admin/provision', b, { token: ADMIN_TOKEN }),
    },
    {
      name: 'control prefix block',
      style: 'control',
      limit: PREFIX_BODY_LIMIT_BYTES,
      send: (b) => control.post('/control/v1/admin/fleet/mitigations/prefix-block', b, { token: ADMIN_TOKEN }),
    },
    {
      name: 'control DNS group',
      style: 'control',
      limit: DNS_GROUP_BODY_LIMIT_BYTES,
      send: (b) => control.post('/control/v1/admin/dns-groups', b, { token: ADMIN_TOKEN }),
    },
    {
      name: 'identity passkey login (default)',
      style: 'identity',
      limit: DEFAULT_BODY_LIMIT_BYTES,
      send: (b) => identity.post('/api/v1/passkeys/login/begin', b),
    },
    { name: 'identity challenge submit', style: 'identity', limit: SUBMIT_BODY_LIMIT_BYTES, send: (b) => identity.post('/api/v1/challenge/submit', b) },
    {
      name: 'identity OAuth client registration',
      style: 'identity',
      limit: 128 * KiB,
      send: (b) => identity.post('/api/v1/admin/oauth-clients', b, { token: IDENTITY_ADMIN_TOKEN }),
    },
    {
      name: 'registry names (default)',
      style: 'control',
      limit: DEFAULT_BODY_LIMIT_BYTES,
      send: (b) => registry.post('/registry/v1/names', b, { token: SERVICE_TOKEN }),
    },
  ];
  for (const c of cases) {
    it(`${c.name}: ${c.limit} bytes parsed, ${c.limit + 1} refused`, async () => {
      expectParsed(await c.send(paddedBody(c.limit)), c.style);
      expectTooLarge(await c.send(paddedBody(c.limit + 1)), c.style);
    });
  }

  it('takes a challenge answer and an armored public key at their maxLength (the submit limit is derived from them)', async () => {
    const armored = Array.from({ length: 262_144 / 64 }, () => 'A'.repeat(63))
      .join('\n')
      .padEnd(262_144, '=');
    const body = { challenge_id: 'c'.repeat(128), answer: 'S'.repeat(65_536), public_key: armored };
    const res = await identity.post('/api/v1/challenge/submit', body);
    // Past the size check and the schema: the challenge does not exist.
    expect(res.status, res.text.slice(0, 300)).to.equal(404);
  });

  it('parses a DNS group with every list and string at its cap (the group limit is derived from them)', async () => {
    const forwards = Array.from({ length: 64 }, (_, i) => ({
      zone: `${i}`.padEnd(254, 'z'),
      upstreams: Array.from({ length: 16 }, (_, j) => `${j}`.padEnd(64, 'u')),
    }));
    const body = {
      name: 'g'.repeat(64),
      bind_addresses: Array.from({ length: 32 }, (_, i) => `${i}`.padEnd(64, 'b')),
      cache_ttl_seconds: 604800,
      forwards,
      enabled: true,
    };
    expect(Buffer.byteLength(JSON.stringify(body))).to.be.below(DNS_GROUP_BODY_LIMIT_BYTES);
    const res = await control.post('/control/v1/admin/dns-groups', body, { token: ADMIN_TOKEN });
    // Parsed and judged on its values (these are not valid names), not refused for its size.
    expect(res.status, res.text.slice(0, 300)).to.equal(422);
  });

  it('refuses a chunked body (no Content-Length) once it passes the limit', async () => {
    const chunk = new TextEncoder().encode('x'.repeat(16 * KiB));
    let sent = 0;
    // Far more than the limit: the server answers once it has read past 64 KiB and drops the rest.
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode('{"pad":"'));
      },
      pull(controller) {
        if (sent >= 4 * 1024 * KiB) return controller.close();
        sent += chunk.length;
        controller.enqueue(chunk);
      },
    });
    const res = await fetch(`${servers[0].url}/control/v1/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: stream,
      duplex: 'half',
    } as RequestInit);
    expect(res.status).to.equal(413);
    expect(await res.json()).to.deep.equal({ detail: 'request body too large' });
  });

  it('checks the credentials before reading a body: an anonymous oversized provision is 401', async () => {
    const res = await control.post('/control/v1/admin/provision', paddedBody(PROVISION_BODY_LIMIT_BYTES + 1));
    expect(res.status, res.text.slice(0, 200)).to.equal(401);
  });

  it('documents each limit in the OpenAPI document (x-body-limit, a 413 response)', async () => {
    const doc = (await control.get('/control/v1/openapi.json')).body;
    const provision = doc.paths['/control/v1/admin/provision'].post;
    expect(provision['x-body-limit']).to.equal(PROVISION_BODY_LIMIT_BYTES);
    expect(provision.requestBody.description).to.equal('JSON, at most 2 MiB');
    expect(provision.responses['413'].description).to.equal('request body larger than 2 MiB');
    expect(doc.paths['/control/v1/auth/login'].post['x-body-limit']).to.equal(DEFAULT_BODY_LIMIT_BYTES);
  });

  it("leaves the OIDC protocol endpoints to oidc-provider's own 56 KiB limit (400 invalid_request, never 5xx)", async () => {
    const form = (bytes: number) => `grant_type=authorization_code&code=${'x'.repeat(bytes - 'grant_type=authorization_code&code='.length)}`;
    const over = await identity.post('/token', form(56 * KiB + 1), { headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    expect(over.status, over.text.slice(0, 300)).to.equal(400);
    expect(over.body.error).to.equal('invalid_request');
  });
});
