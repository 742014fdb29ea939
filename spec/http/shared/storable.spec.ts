import { expect } from 'chai';
import { createIdentityApp } from '../../../http/identity/app.js';
import { checkStorable, MAX_FIELD_ERRORS, MAX_NESTING } from '../../../http/shared/routes.js';
import { api, type ApiResponse } from '../../support/http.js';
import { startApp } from '../../support/system.js';
import { ADMIN_TOKEN, node, startFleet, type FleetHarness } from '../control/fleet/support.js';

/** The control 422 of the given kind at the given location. */
function expect422(res: ApiResponse, type: string, loc: (string | number)[]): void {
  expect(res.status, res.text.slice(0, 300)).to.equal(422);
  expect(res.body.detail.message).to.equal('request validation failed');
  expect(res.body.detail.errors.map((e: { loc: unknown[]; type: string }) => [e.type, e.loc])).to.deep.include([type, loc]);
}

describe('inputs PostgreSQL cannot store are refused with 422 before any handler runs', function () {
  this.timeout(120_000);
  let h: FleetHarness;

  before(async () => {
    h = await startFleet();
  });
  after(async () => {
    await h?.close();
  });

  // As text: JSON.stringify itself overflows the stack at this depth.
  const nested = (depth: number): string => `${'{"a":'.repeat(depth)}"leaf"${'}'.repeat(depth)}`;

  it('refuses a NUL in a JSON string, and one in a field name', async () => {
    expect422(await h.client.post('/admin/nodes', { ...node('fra1'), labels: { role: 'edge\u0000' } }), 'string_nul', ['body', 'labels', 'role']);
    expect422(await h.client.post('/admin/nodes', { ...node('fra1'), labels: { 'ro\u0000le': 'edge' } }), 'string_nul', ['body', 'labels', 'ro\uFFFDle']);
  });

  it('refuses a lone surrogate in a JSON string', async () => {
    // JSON.stringify writes a lone surrogate as the escape \ud800, as an attacker would.
    expect422(await h.client.post('/admin/nodes', { ...node('fra1'), site: 'x\ud800' }), 'string_unpaired_surrogate', ['body', 'site']);
    expectStored(await h.client.post('/admin/nodes', { ...node('fra2'), labels: { emoji: '\ud83d\ude00' } }));
  });

  it('refuses a lone surrogate sent unescaped in UTF-16, and stores one sent as UTF-8 bytes as U+FFFD (the decoder replaces each byte)', async () => {
    const post = (body: Buffer, charset: string) =>
      fetch(`${h.url}/control/v1/admin/nodes`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': `application/json; charset=${charset}` },
        body: new Uint8Array(body),
      });
    const utf16 = Buffer.from(JSON.stringify({ ...node('fra4'), site: 'x\ud800' }).replace('\\ud800', '\ud800'), 'utf16le');
    const refused = await post(utf16, 'utf-16le');
    expect(refused.status).to.equal(422);
    expect((await refused.json()).detail.errors[0]).to.include({ type: 'string_unpaired_surrogate' });
    const text = JSON.stringify({ ...node('fra5'), site: 'x#' });
    const utf8 = Buffer.concat([
      Buffer.from(text.slice(0, text.indexOf('#'))),
      Buffer.from([0xed, 0xa0, 0x80]),
      Buffer.from(text.slice(text.indexOf('#') + 1)),
    ]);
    expect((await post(utf8, 'utf-8')).status).to.equal(201);
    expect((await h.client.get('/admin/nodes/fra5')).body.site).to.match(/^x\uFFFD+$/);
  });

  it(`refuses free-form objects nested deeper than ${MAX_NESTING} levels (5,000 deep included)`, async () => {
    for (const field of ['labels', 'inventory', 'base_template']) {
      const res = await h.client.post('/admin/nodes', `${JSON.stringify(node('fra3')).slice(0, -1)},"${field}":${nested(5000)}}`);
      expect(res.status, field).to.equal(422);
      expect(res.body.detail.errors[0].type).to.equal('depth');
    }
  });

  it('refuses a NUL in a path parameter (%00)', async () => {
    expect422(await h.client.get('/admin/nodes/fra%00x'), 'string_nul', ['path', 'node_id']);
    expect422(await h.client.patch('/admin/nodes/fra%00x', { site: 'x' }), 'string_nul', ['path', 'node_id']);
  });

  it('refuses a number no column holds (1e308) instead of dropping what carries it', async () => {
    expect422(await h.client.post('/admin/nodes', { ...node('fra4'), labels: { big: 1e308 } }), 'number_range', ['body', 'labels', 'big']);
  });

  it(`lists at most ${MAX_FIELD_ERRORS} validation errors, with a note of how many more there were`, async () => {
    const body: Record<string, unknown> = {};
    // 2,000 unknown fields: about 40 KB, within the route's 64 KiB body limit.
    for (let i = 0; i < 2000; i++) body[`unknown_${i}`] = i;
    const res = await h.client.post('/agent/register', body);
    expect(res.status).to.equal(422);
    const errors = res.body.detail.errors as { loc: unknown[]; msg: string; type: string }[];
    expect(errors).to.have.length(MAX_FIELD_ERRORS + 1);
    expect(errors[MAX_FIELD_ERRORS].type).to.equal('too_many_errors');
    expect(errors[MAX_FIELD_ERRORS].msg).to.match(/^\d+ more errors not shown$/);
    expect(res.text.length).to.be.below(8 * 1024);
  });

  it('refuses the same on the identity service, in its 422 style', async () => {
    const server = await startApp(createIdentityApp(h.sys.context));
    try {
      const res = await api(server.url).post('/api/v1/passkeys/login/begin', { asn: 4242420000, extra: 'a\u0000' });
      expect(res.status).to.equal(422);
      expect(res.body.error).to.equal('invalid_request');
      expect(res.body.detail.map((e: { type: string }) => e.type)).to.include('string_nul');
    } finally {
      await server.close();
    }
  });

  function expectStored(res: ApiResponse): void {
    expect(res.status, res.text.slice(0, 200)).to.equal(201);
  }
});

/**
 * A body whose texts are known storable (no `\u` escape) is first walked without
 * keeping locations; only a body that walk refuses gets the full walk and its
 * errors. Both must refuse exactly the same values.
 */
describe('checkStorable: the quick walk of a body without escapes refuses what the full walk refuses', () => {
  const deep = (depth: number, leaf: unknown): unknown => (depth === 0 ? leaf : depth % 2 ? { a: deep(depth - 1, leaf) } : [deep(depth - 1, leaf)]);
  const outcome = (value: unknown, textsStorable: boolean): unknown => {
    try {
      checkStorable(value, 'body', textsStorable);
      return 'stored';
    } catch (err) {
      return (err as { errors?: unknown }).errors ?? err;
    }
  };
  const cases: Record<string, unknown> = {
    'the largest safe integers': { a: [Number.MAX_SAFE_INTEGER, -Number.MAX_SAFE_INTEGER, 0.5, 'text', true, null] },
    '2^53': { a: [1, { b: 2 ** 53 }] },
    '-2^53': { a: -(2 ** 53) },
    'not finite': { a: { b: [Infinity] } },
    [`${MAX_NESTING} levels`]: deep(MAX_NESTING, 1),
    [`${MAX_NESTING + 1} levels`]: deep(MAX_NESTING + 1, 1),
    'a number at the deepest level allowed': deep(MAX_NESTING - 1, [2 ** 60]),
  };
  for (const [name, value] of Object.entries(cases)) {
    it(name, () => {
      expect(outcome(value, true)).to.deep.equal(outcome(value, false));
    });
  }

  it('stores what it should and refuses what it should', () => {
    expect(outcome(cases['the largest safe integers'], true)).to.equal('stored');
    expect(outcome(cases['2^53'], true)).to.not.equal('stored');
    expect(outcome(cases[`${MAX_NESTING + 1} levels`], true)).to.not.equal('stored');
  });
});
