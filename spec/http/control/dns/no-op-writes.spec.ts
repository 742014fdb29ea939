import { expect } from 'chai';
import { startControl, type ControlInstance } from '../../../support/agent-socket.js';
import { expectResponse } from '../../../support/http.js';
import { group, publishedNode, zone } from './support.js';

/**
 * A PATCH that changes nothing (empty, or every field as it is, in any form the
 * API stores the same way) answers 200 with the current object like any PATCH,
 * and writes nothing: no DNS event, no generation for any member, no doorbell.
 * The audit entry of the request is written as for every write request.
 */
describe('control: DNS writes that change nothing', () => {
  let c: ControlInstance;
  let g: number;
  let z: number;
  let r: number;
  beforeEach(async () => {
    c = await startControl();
    await publishedNode(c.admin, 'fra1', 1);
    g = await group(c.admin, 'anycast', { bind_addresses: ['172.20.0.53', 'fd42::53'], forwards: [{ zone: 'dn42', upstreams: ['172.20.0.1'] }] });
    z = await zone(c.admin, g, 'example.dn42', { primary_ns: 'ns.example.dn42' });
    r = (await c.admin.post(`/admin/dns-groups/${g}/zones/${z}/records`, { name: 'www', type: 'AAAA', content: 'fd42::80', ttl: 60 })).body.record.id;
    expectResponse(await c.admin.put('/admin/nodes/fra1/dns-group', { dns_group_id: g })).status(200);
    c.sys.broadcaster.calls.length = 0;
  });
  afterEach(async () => {
    await c.close();
  });

  const head = async () => Number((await c.sys.pool.query(`SELECT coalesce(max(position), 0) AS p FROM events WHERE stream_id NOT LIKE 'audit-%'`)).rows[0].p);
  const generation = async () => (await c.admin.get('/admin/nodes/fra1')).body.current_generation as number;

  /** Sends each PATCH, expects 200 with `current()` as it was before, and that nothing was appended, published or rung. */
  async function expectNoOps(path: string, bodies: Record<string, unknown>[], current: () => Promise<unknown>): Promise<void> {
    const before = { body: await current(), head: await head(), generation: await generation() };
    for (const body of bodies) {
      const res = await c.admin.patch(path, body);
      expect(res.status, res.text).to.equal(200);
      expect(res.body, JSON.stringify(body)).to.deep.equal(before.body);
      expect(await head(), `${JSON.stringify(body)} appended events`).to.equal(before.head);
    }
    expect(await generation()).to.equal(before.generation);
    expect(c.sys.broadcaster.calls).to.deep.equal([]);
    expect(await current()).to.deep.equal(before.body);
  }

  it('group: an empty PATCH or one repeating every field (addresses in another spelling) writes nothing', async () => {
    await expectNoOps(
      `/admin/dns-groups/${g}`,
      [
        {},
        {
          name: 'anycast',
          bind_addresses: ['172.20.0.53', 'FD42:0::53'],
          cache_ttl_seconds: 300,
          forwards: [{ upstreams: ['172.20.0.1'], zone: 'DN42.' }],
          enabled: true,
        },
      ],
      async () => (await c.admin.get(`/admin/dns-groups/${g}`)).body,
    );
  });

  it('zone: an empty PATCH or one repeating every field (names in another spelling, null defaults) writes nothing; its serial stays', async () => {
    await expectNoOps(
      `/admin/dns-groups/${g}/zones/${z}`,
      [
        {},
        {
          zone: 'Example.DN42.',
          primary_ns: 'NS.example.dn42.',
          admin_email: null,
          soa_refresh: 3600,
          soa_retry: 900,
          soa_expire: 604800,
          soa_minimum: 300,
          default_ttl: 3600,
          enabled: true,
        },
      ],
      async () => {
        const zoneOut = (await c.admin.get(`/admin/dns-groups/${g}/zones`)).body.find((x: { id: number }) => x.id === z);
        return { zone: zoneOut, group: (await c.admin.get(`/admin/dns-groups/${g}`)).body };
      },
    );
  });

  it('record: an empty PATCH or one repeating every field (content in another spelling) writes nothing; the serial stays', async () => {
    await expectNoOps(
      `/admin/dns-groups/${g}/zones/${z}/records/${r}`,
      [{}, { name: 'www', type: 'AAAA', content: 'FD42:0:0::80', ttl: 60, comment: null, enabled: true, sort_order: 0 }],
      async () => {
        const record = (await c.admin.get(`/admin/dns-groups/${g}/zones/${z}/records`)).body.find((x: { id: number }) => x.id === r);
        const zoneOut = (await c.admin.get(`/admin/dns-groups/${g}/zones`)).body.find((x: { id: number }) => x.id === z);
        return { record, zone: zoneOut };
      },
    );
  });

  it('a PATCH that changes one field among repeated ones still publishes, and its event carries only that field', async () => {
    const before = await generation();
    const res = await c.admin.patch(`/admin/dns-groups/${g}`, { name: 'anycast', cache_ttl_seconds: 60, enabled: true });
    expectResponse(res).status(200).body({ cache_ttl_seconds: 60 });
    expect(await generation()).to.equal(before + 1);
    expect(c.sys.broadcaster.published.map((p) => p.node_id)).to.deep.equal(['fra1']);
    const { rows } = await c.sys.pool.query(`SELECT data FROM events WHERE stream_id = $1 ORDER BY position DESC LIMIT 1`, [`dnsgroup-${g}`]);
    expect(rows[0].data).to.deep.equal({ group_id: g, changes: { cache_ttl_seconds: 60 } });
  });
});
