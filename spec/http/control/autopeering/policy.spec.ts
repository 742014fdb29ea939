import { expect } from 'chai';
import { DEFAULT_AUTOPEERING_POLICY } from '../../../../domain/autopeering/policy.js';
import { nodeStream } from '../../../../domain/node/events.js';
import { expectResponse } from '../../../support/http.js';
import { node, startFleet, type FleetHarness } from '../fleet/support.js';
import { auditEntries } from '../support.js';

const OPEN = {
  enabled: true,
  endpoint_host: 'fra1.example.net',
  max_sessions: 20,
  notes: 'upstream 1 Gbit/s',
  region: 'Europe',
  country_code: 'DE',
  description: 'Frankfurt, DE-CIX',
  bandwidth_mbps: 1000,
  monthly_quota_gb: 2000,
  notice: 'maintenance on Sundays',
};

describe('control: autopeering policy administration', function () {
  this.timeout(30_000);
  let h: FleetHarness;
  const policyOf = async (nodeId: string) => (await h.client.get('/admin/autopeering/nodes')).body.nodes.find((n: { node_id: string }) => n.node_id === nodeId);

  before(async () => {
    h = await startFleet();
    for (const id of ['fra1', 'ams1']) expectResponse(await h.client.post('/admin/nodes', node(id))).status(201);
  });
  after(async () => h?.close());

  it('lists every node, ordered by node_id, with the closed defaults and no provisioned peers', async () => {
    const res = await h.client.get('/admin/autopeering/nodes');
    expectResponse(res).status(200);
    expect(res.body.nodes).to.deep.equal([
      { node_id: 'ams1', policy: DEFAULT_AUTOPEERING_POLICY, provisioned: 0, updated_at: null },
      { node_id: 'fra1', policy: DEFAULT_AUTOPEERING_POLICY, provisioned: 0, updated_at: null },
    ]);
  });

  it('PUT stores the whole policy and answers with the node row; GET shows it', async () => {
    const res = await h.client.put('/admin/autopeering/nodes/fra1', OPEN);
    expectResponse(res).status(200);
    expect(res.body).to.deep.equal({ node_id: 'fra1', policy: OPEN, provisioned: 0, updated_at: h.sys.clock.now().toISOString() });
    expect(await policyOf('fra1')).to.deep.equal(res.body);
    expect((await policyOf('ams1')).policy).to.deep.equal(DEFAULT_AUTOPEERING_POLICY);
  });

  it('PUT is a full replace: omitted fields return to their defaults', async () => {
    const res = await h.client.put('/admin/autopeering/nodes/fra1', { enabled: true, max_sessions: 5 });
    expectResponse(res).status(200);
    expect(res.body.policy).to.deep.equal({ ...DEFAULT_AUTOPEERING_POLICY, enabled: true, max_sessions: 5 });
  });

  it('PATCH changes only the given fields; null clears one', async () => {
    await h.client.put('/admin/autopeering/nodes/fra1', OPEN);
    const res = await h.client.patch('/admin/autopeering/nodes/fra1', { enabled: false, max_sessions: null, notice: 'closed for now' });
    expectResponse(res).status(200);
    expect(res.body.policy).to.deep.equal({ ...OPEN, enabled: false, max_sessions: null, notice: 'closed for now' });
    expectResponse(await h.client.patch('/admin/autopeering/nodes/fra1', {}))
      .status(200)
      .body({ policy: res.body.policy });
  });

  it('records one AutopeeringPolicySet per effective change in the node stream, none for a repeat, and audits the writes', async () => {
    const before = await h.sys.store.readStream(nodeStream('ams1'));
    await h.client.put('/admin/autopeering/nodes/ams1', { enabled: true, endpoint_host: '2001:db8::1' });
    await h.client.put('/admin/autopeering/nodes/ams1', { enabled: true, endpoint_host: '2001:db8::1' });
    await h.client.patch('/admin/autopeering/nodes/ams1', { enabled: true });
    const added = (await h.sys.store.readStream(nodeStream('ams1'))).slice(before.length);
    expect(added.map((e) => e.type)).to.deep.equal(['AutopeeringPolicySet']);
    expect(added[0].data).to.deep.equal({ node_id: 'ams1', policy: { ...DEFAULT_AUTOPEERING_POLICY, enabled: true, endpoint_host: '2001:db8::1' } });
    const audited = (await auditEntries(h.sys)).filter((e) => e.path === '/control/v1/admin/autopeering/nodes/ams1');
    expect(audited.map((e) => `${e.method} ${e.status_code}`)).to.deep.equal(['PATCH 200', 'PUT 200', 'PUT 200']); // newest first
  });

  it('does not publish a generation or ring a doorbell', async () => {
    const published = h.sys.broadcaster.calls.length;
    await h.client.patch('/admin/autopeering/nodes/fra1', { description: 'no desired state change' });
    expect(h.sys.broadcaster.calls.length).to.equal(published);
    expect((await h.client.get('/admin/nodes/fra1')).body.current_generation).to.equal(0);
  });

  it('answers 404 unknown node <id> for PUT and PATCH of an unknown node', async () => {
    expectResponse(await h.client.put('/admin/autopeering/nodes/ghost', { enabled: true }))
      .status(404)
      .detail('unknown node ghost');
    expectResponse(await h.client.patch('/admin/autopeering/nodes/ghost', { enabled: true }))
      .status(404)
      .detail('unknown node ghost');
  });

  it('answers 422 with field errors for bodies that break the schema', async () => {
    const bad: [Record<string, unknown>, string][] = [
      [{ enabled: 'yes' }, 'enabled'],
      [{ max_sessions: -1 }, 'max_sessions'],
      [{ max_sessions: 1.5 }, 'max_sessions'],
      [{ endpoint_host: 'fra1.example.net:51820' }, 'endpoint_host'],
      [{ endpoint_host: 'bad host' }, 'endpoint_host'],
      [{ country_code: 'deu' }, 'country_code'],
      [{ bandwidth_mbps: 0 }, 'bandwidth_mbps'],
      [{ notes: 'x'.repeat(4097) }, 'notes'],
      [{ colour: 'blue' }, 'colour'],
    ];
    for (const [body, field] of bad) {
      for (const send of [h.client.put, h.client.patch]) {
        const res = await send('/admin/autopeering/nodes/fra1', body);
        expectResponse(res).status(422);
        expect(
          res.body.detail.errors.map((e: { loc: unknown[] }) => e.loc[1]),
          JSON.stringify(body),
        ).to.include(field);
      }
    }
  });

  it('needs the admin credential', async () => {
    const anonymous = { token: '' };
    for (const res of [
      await h.client.get('/admin/autopeering/nodes', anonymous),
      await h.client.put('/admin/autopeering/nodes/fra1', { enabled: true }, anonymous),
      await h.client.get('/admin/autopeering/requests', anonymous),
    ]) {
      expectResponse(res).status(401);
    }
  });

  it('forgets the policy of a deleted node: the same id created again starts closed', async () => {
    expectResponse(await h.client.post('/admin/nodes', node('tmp1'))).status(201);
    await h.client.put('/admin/autopeering/nodes/tmp1', { enabled: true });
    expectResponse(await h.client.delete('/admin/nodes/tmp1')).status(204);
    expect(await policyOf('tmp1')).to.equal(undefined);
    expectResponse(await h.client.post('/admin/nodes', node('tmp1'))).status(201);
    expect(await policyOf('tmp1')).to.deep.equal({ node_id: 'tmp1', policy: DEFAULT_AUTOPEERING_POLICY, provisioned: 0, updated_at: null });
    expectResponse(await h.client.patch('/admin/autopeering/nodes/tmp1', { notice: 'x' }))
      .status(200)
      .body({ policy: { ...DEFAULT_AUTOPEERING_POLICY, notice: 'x' } });
  });
});
