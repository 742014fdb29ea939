import { expect } from 'chai';
import { node, startFleet, type FleetHarness } from '../control/fleet/support.js';

describe('answers that carry a secret are not stored by caches', function () {
  this.timeout(60_000);
  let h: FleetHarness;
  before(async () => {
    h = await startFleet();
  });
  after(async () => {
    await h?.close();
  });

  it('sends Cache-Control: no-store with agent token issue and rotation and an enrollment token, not with their lists', async () => {
    expect((await h.client.post('/admin/nodes', node('fra1'))).status).to.equal(201);
    const issued = await h.client.post('/admin/nodes/fra1/agent-tokens', {});
    expect(issued.status, issued.text).to.equal(201);
    expect(issued.headers.get('cache-control')).to.equal('no-store');
    const rotated = await h.client.post(`/admin/agent-tokens/${issued.body.token.split('.')[0]}/rotate`, {});
    expect(rotated.status, rotated.text).to.equal(201);
    expect(rotated.headers.get('cache-control')).to.equal('no-store');
    const enrollment = await h.client.post('/admin/enrollment-tokens', { node_id: 'fra1' });
    expect(enrollment.status, enrollment.text).to.equal(201);
    expect(enrollment.headers.get('cache-control')).to.equal('no-store');
    expect((await h.client.get('/admin/enrollment-tokens')).headers.get('cache-control')).to.equal(null);
  });
});
