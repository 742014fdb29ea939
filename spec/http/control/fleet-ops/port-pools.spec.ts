import { expect } from 'chai';
import { expectResponse } from '../../../support/http.js';
import { startFleet, type FleetHarness } from '../fleet/support.js';

describe('control: GET /admin/fleet/port-pools', () => {
  let h: FleetHarness;
  before(async () => {
    h = await startFleet();
  });
  after(() => h.close());

  it('answers the external and internal WireGuard port pools', async () => {
    const res = await h.client.get('/admin/fleet/port-pools');
    expectResponse(res).status(200);
    expect(res.body).to.deep.equal({ pools: { external: { start: 51800, end: 51830 }, internal: { start: 52800, end: 52820 } } });
  });

  it('needs the admin credential', async () => {
    expectResponse(await h.client.get('/admin/fleet/port-pools', { token: '' }))
      .status(401)
      .detail('missing bearer token');
    expectResponse(await h.client.get('/admin/fleet/port-pools', { token: 'not-the-admin-token-0123456789' })).status(401);
  });
});
