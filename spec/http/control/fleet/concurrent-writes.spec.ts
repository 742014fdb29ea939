import { expect } from 'chai';
import { expectResponse } from '../../../support/http.js';
import { node, startFleet, wg, type FleetHarness } from './support.js';

describe('control: concurrent fleet writes', () => {
  let h: FleetHarness;
  beforeEach(async () => {
    h = await startFleet();
  });
  afterEach(async () => {
    await h.close();
  });

  it('50 concurrent PATCHes of one published node all succeed, each answer carrying its own labels and generation', async () => {
    await h.client.post('/admin/nodes', node('fra1'));
    expectResponse(await h.client.post('/admin/nodes/fra1/interfaces', { spec: wg('dn42_a', 51800) })).status(201);
    const answers = await Promise.all(Array.from({ length: 50 }, (_, i) => h.client.patch('/admin/nodes/fra1', { labels: { writer: i } })));
    expect(answers.map((a) => a.status)).to.deep.equal(Array(50).fill(200));
    // Each answer is the state its own write produced: its labels, and the generation it published.
    const generations = answers.map((a, i) => {
      expect(a.body.labels, `answer ${i}`).to.deep.equal({ writer: i });
      return a.body.current_generation as number;
    });
    expect([...generations].sort((a, b) => a - b)).to.deep.equal(Array.from({ length: 50 }, (_, i) => i + 2));
    expect((await h.client.get('/admin/nodes/fra1')).body.current_generation).to.equal(51);
  });

  it('concurrent creates of different nodes all succeed', async () => {
    const answers = await Promise.all(Array.from({ length: 30 }, (_, i) => h.client.post('/admin/nodes', node(`n${String(i).padStart(2, '0')}`))));
    expect(answers.map((a) => a.status)).to.deep.equal(Array(30).fill(201));
    expect(answers.map((a) => a.body.node_id)).to.deep.equal(Array.from({ length: 30 }, (_, i) => `n${String(i).padStart(2, '0')}`));
    expect((await h.client.get('/admin/nodes')).body).to.have.length(30);
  });

  it('concurrent site PATCHes of different published nodes all succeed and write no fleet-wide stream', async () => {
    for (let i = 0; i < 10; i++) {
      await h.client.post('/admin/nodes', node(`n${i}`));
      await h.client.post(`/admin/nodes/n${i}/interfaces`, { spec: wg('dn42_a', 51800) });
    }
    const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => h.client.patch(`/admin/nodes/n${i}`, { site: `site${i}` })));
    expect(answers.map((a) => [a.status, a.body.site, a.body.current_generation])).to.deep.equal(Array.from({ length: 10 }, (_, i) => [200, `site${i}`, 2]));
    const topology = await h.sys.pool.query(`SELECT count(*) AS n FROM events WHERE stream_id = 'fleet-topology'`);
    expect(Number(topology.rows[0].n)).to.equal(0);
  });

  it('a true conflict still fails: two concurrent creates of one node give one 201 and one 409', async () => {
    const answers = await Promise.all([h.client.post('/admin/nodes', node('fra1')), h.client.post('/admin/nodes', node('fra1', { site: 'other' }))]);
    expect(answers.map((a) => a.status).sort()).to.deep.equal([201, 409]);
    expectResponse(answers.find((a) => a.status === 409)!).detail('node fra1 already exists');
    const created = answers.find((a) => a.status === 201)!;
    expect((await h.client.get('/admin/nodes/fra1')).body.site).to.equal(created.body.site);
  });
});
