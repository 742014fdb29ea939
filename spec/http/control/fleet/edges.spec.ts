import { expect } from 'chai';
import { listAuditEntries } from '../../../../projections/audit-log/queries.js';
import { expectResponse } from '../../../support/http.js';
import { bgp, node, startFleet, wg, type FleetHarness } from './support.js';

describe('control: fleet edges', () => {
  let h: FleetHarness;
  before(async () => {
    h = await startFleet();
    await h.client.post('/admin/nodes', node('fra1'));
  });
  after(async () => {
    await h.close();
  });

  it('answers 404 unknown node on every node-scoped write', async () => {
    const writes: [string, string, unknown][] = [
      ['put', '/admin/nodes/ghost/peerings/full', { peering: { name: 'p', remote_asn: 1 }, interfaces: [], bgp_sessions: [] }],
      ['post', '/admin/nodes/ghost/peerings/backfill', { dry_run: true }],
      ['post', '/admin/nodes/ghost/peerings/backfill', {}],
      ['post', '/admin/nodes/ghost/peerings/provision', { peering: { name: 'p', remote_asn: 1 }, interface_spec: wg('dn42_a', 51801) }],
      ['post', '/admin/nodes/ghost/interfaces', { spec: wg('dn42_a', 51801) }],
      ['post', '/admin/nodes/ghost/bgp-sessions', { spec: bgp('s', 1) }],
      ['delete', '/admin/nodes/ghost', undefined],
      ['post', '/admin/nodes/ghost/recommission', undefined],
    ];
    for (const [method, path, body] of writes) {
      const res = await h.client.send(method.toUpperCase(), path, { body });
      expect(res.status, `${method} ${path}: ${res.text}`).to.equal(404);
      expect(res.body.detail).to.equal('unknown node ghost');
    }
  });

  it('answers 422 for ids that are not integers and for unknown body fields', async () => {
    expectResponse(await h.client.get('/admin/peerings/abc')).status(422);
    expectResponse(await h.client.get('/admin/interfaces/1.5')).status(422);
    expectResponse(await h.client.get('/admin/nodes/fra1/generations/0')).status(422);
    const res = await h.client.post('/admin/nodes/fra1/interfaces', { spec: { ...wg('dn42_a', 51801), colour: 'red' } });
    expectResponse(res).status(422);
    expect(res.body.detail.errors[0].loc).to.deep.equal(['body', 'spec', 'colour']);
    expectResponse(await h.client.post('/admin/nodes/fra1/interfaces', { spec: wg('a-name-longer-than-15', 51801) })).status(422);
  });

  it('guards every fleet route with the admin bearer and audits refused and accepted writes', async () => {
    // The previous test's last audit write may still be in flight; it must land before ours.
    await h.sys.context.background.drain();
    expectResponse(await h.client.get('/admin/nodes', { token: 'wrong-token-wrong-token' })).status(401);
    expectResponse(await h.client.post('/admin/nodes', node('x1'), { token: 'wrong-token-wrong-token' })).status(401);
    // Audit writes land after their response; waiting keeps the log in request order.
    await h.sys.context.background.drain();
    expectResponse(await h.client.patch('/admin/nodes/fra1', { site: 'ber' })).status(200);
    await h.sys.context.background.drain();
    const entries = await listAuditEntries(h.sys.pool, 10);
    expect(
      entries
        .slice(0, 2)
        .map((e) => [e.method, e.path, e.status_code, e.actor.startsWith('anonymous@') || e.actor === 'admin' ? e.actor.split('@')[0] : e.actor]),
    ).to.deep.equal([
      ['PATCH', '/control/v1/admin/nodes/fra1', 200, 'admin'],
      ['POST', '/control/v1/admin/nodes', 401, 'anonymous'],
    ]);
  });

  it('describes the fleet routes in the OpenAPI document', async () => {
    const doc = (await h.client.get('/openapi.json')).body;
    for (const path of [
      '/control/v1/admin/nodes',
      '/control/v1/admin/nodes/{node_id}/peerings/provision',
      '/control/v1/admin/nodes/{node_id}/generations/{generation}/diff',
      '/control/v1/admin/provision',
      '/control/v1/admin/nodes/{node_id}/history',
    ]) {
      expect(doc.paths, path).to.have.property(path);
    }
    expect(doc.paths['/control/v1/admin/nodes'].post.requestBody.content['application/json'].schema.properties).to.include.keys('node_id', 'asn', 'link_local');
  });
});
