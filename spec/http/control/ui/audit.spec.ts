import { expect } from 'chai';
import { api, expectResponse } from '../../../support/http.js';
import { auditEntries } from '../support.js';
import { node, startFleet, type FleetHarness } from '../fleet/support.js';

interface Entry {
  id: number;
  actor: string;
  method: string;
  path: string;
  status_code: number;
  detail: string | null;
  created_at: string;
}

describe('Console audit (/ui/audit)', function () {
  this.timeout(60_000);
  let f: FleetHarness;
  const page = async (query = ''): Promise<Entry[]> => {
    const res = await f.client.get(`/ui/audit${query}`);
    expectResponse(res).status(200);
    expect(Object.keys(res.body)).to.deep.equal(['entries']);
    return res.body.entries;
  };

  before(async () => {
    f = await startFleet();
    for (const id of ['a1', 'a2', 'a3']) expectResponse(await f.client.post('/admin/nodes', node(id))).status(201);
    expectResponse(await f.client.patch('/admin/nodes/a2', { labels: { rack: 'r1' } })).status(200);
    expectResponse(await f.client.delete('/admin/nodes/a3')).status(204);
    // A refused write is audited too, under another actor.
    expectResponse(await api(`${f.url}/control/v1`, { token: 'wrong' }).post('/admin/nodes', node('x'))).status(401);
    await auditEntries(f.sys);
  });
  after(async () => f?.close());

  it('answers the entries newest first by id, in the admin audit entry shape', async () => {
    const entries = await page();
    expect(entries).to.have.length(6);
    expect(entries.map((e) => [e.method, e.path, e.status_code])).to.deep.equal([
      ['POST', '/control/v1/admin/nodes', 401],
      ['DELETE', '/control/v1/admin/nodes/a3', 204],
      ['PATCH', '/control/v1/admin/nodes/a2', 200],
      ['POST', '/control/v1/admin/nodes', 201],
      ['POST', '/control/v1/admin/nodes', 201],
      ['POST', '/control/v1/admin/nodes', 201],
    ]);
    const ids = entries.map((e) => e.id);
    expect(ids).to.deep.equal([...ids].sort((a, b) => b - a));
    for (const e of entries) expect(Object.keys(e)).to.have.members(['id', 'actor', 'method', 'path', 'status_code', 'detail', 'created_at']);
    expect((await f.client.get('/admin/audit-log')).body.entries.map((e: Entry) => e.id).sort()).to.deep.equal([...ids].sort());
  });

  it('pages with before_id until nothing is left', async () => {
    const all = await page();
    const first = await page('?limit=4');
    expect(first).to.deep.equal(all.slice(0, 4));
    expect(await page(`?limit=4&before_id=${first[3].id}`)).to.deep.equal(all.slice(4));
    expect(await page(`?before_id=${all[5].id}`)).to.deep.equal([]);
  });

  it('filters by q, a case-insensitive substring of actor, method or path', async () => {
    const all = await page();
    expect((await page('?q=patch')).map((e) => e.method)).to.deep.equal(['PATCH']);
    expect((await page('?q=NODES/A')).map((e) => e.path)).to.deep.equal(['/control/v1/admin/nodes/a3', '/control/v1/admin/nodes/a2']);
    expect(await page('?q=ADMIN')).to.have.length(6);
    // Only the refused write's actor is anonymous; neither a method nor a path says so.
    expect(all[0].actor).to.match(/^anonymous@/);
    expect(await page('?q=ANONYMOUS')).to.deep.equal([all[0]]);
    expect(await page('?q=%25')).to.deep.equal([]);
    expect(await page('?q=nothing-like-this')).to.deep.equal([]);
    const [newest] = await page('?q=post&limit=1');
    expect(await page(`?q=post&before_id=${newest.id}`)).to.have.length(3);
  });

  it('refuses limit outside 1..500, a bad before_id and an overlong q (422); an empty q filters nothing', async () => {
    // A cursor past 2^53 - 1 (no id a client was given) is refused, not handed to the database (a bigint overflow was a 500).
    for (const q of [
      'limit=0',
      'limit=501',
      'before_id=0',
      'before_id=-1',
      'before_id=99999999999999999999',
      'before_id=9007199254740992',
      `q=${'x'.repeat(201)}`,
      'other=1',
    ]) {
      const res = await f.client.get(`/ui/audit?${q}`);
      expectResponse(res).status(422).detail('request validation failed');
      expect(res.body.detail.errors).to.be.an('array').that.is.not.empty;
    }
    expect(await page(`?limit=500&q=${'x'.repeat(200)}`)).to.deep.equal([]);
    expect(await page('?q=')).to.deep.equal(await page());
    expect(await page(`?before_id=${Number.MAX_SAFE_INTEGER}`)).to.deep.equal(await page());
  });

  it('takes 100 entries unless told otherwise', async () => {
    for (let i = 0; i < 100; i++) expectResponse(await f.client.patch('/admin/nodes/a1', { labels: { n: i } })).status(200);
    await auditEntries(f.sys);
    expect(await page()).to.have.length(100);
    expect(await page('?limit=500')).to.have.length(106);
  });
});
