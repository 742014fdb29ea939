import { expect } from 'chai';
import { validateDesiredState } from '../../../../domain/desired-state/schema.js';
import { agentSocket, ADMIN_TOKEN, startControl, type ControlInstance } from '../../../support/agent-socket.js';
import { issueAgentToken } from '../../../support/agents.js';
import { ZONE_SOA_DEFAULTS } from '../../../support/dns.js';
import { expectResponse } from '../../../support/http.js';
import { group, node, publishedNode, zone } from './support.js';

describe('control: DNS group members', () => {
  let c: ControlInstance;
  beforeEach(async () => {
    c = await startControl();
  });
  afterEach(async () => {
    await c.close();
  });

  const generation = async (nodeId: string) => (await c.admin.get(`/admin/nodes/${nodeId}`)).body.current_generation as number;
  const dnsOf = async (nodeId: string) => (await c.admin.get(`/admin/nodes/${nodeId}/desired-state`)).body.state.dns;
  const join = async (nodeId: string, groupId: number | null) => {
    const res = await c.admin.put(`/admin/nodes/${nodeId}/dns-group`, { dns_group_id: groupId });
    expectResponse(res).status(200).body({ node_id: nodeId, dns_group_id: groupId });
    return res;
  };
  /** Events appended after `position` (audit entries left out: they are written after the answer), with the transaction each was written in. */
  const eventsAfter = async (position: number) =>
    (
      await c.sys.pool.query(`SELECT stream_id, type, tx_id::text AS tx FROM events WHERE position > $1 AND stream_id NOT LIKE 'audit-%' ORDER BY position`, [
        position,
      ])
    ).rows as {
      stream_id: string;
      type: string;
      tx: string;
    }[];
  const head = async () => Number((await c.sys.pool.query(`SELECT coalesce(max(position), 0) AS p FROM events WHERE stream_id NOT LIKE 'audit-%'`)).rows[0].p);

  it('PUT /nodes/{id}/dns-group joins a group: the node publishes a generation with the dns section in the same append', async () => {
    await publishedNode(c.admin, 'fra1', 1);
    const g = await group(c.admin, 'anycast', { forwards: [{ zone: 'dn42', upstreams: ['172.20.0.1'] }] });
    const z = await zone(c.admin, g, 'example.dn42');
    await c.admin.post(`/admin/dns-groups/${g}/zones/${z}/records`, { name: 'www', type: 'A', content: '172.20.0.80' });
    const before = await generation('fra1');
    const position = await head();
    const res = await join('fra1', g);
    expect(res.body.current_generation).to.equal(before + 1);
    const events = await eventsAfter(position);
    expect(events.map((e) => [e.stream_id, e.type]).sort()).to.deep.equal([
      [`desired-state-fra1`, 'DesiredStatePublished'],
      [`dnsgroup-${g}`, 'DnsGroupMemberJoined'],
      ['node-fra1', 'NodeDnsGroupAssigned'],
    ]);
    expect(new Set(events.map((e) => e.tx)).size).to.equal(1);
    expect(await dnsOf('fra1')).to.deep.include({
      group_id: g,
      group_name: 'anycast',
      bind_addresses: ['172.20.0.53'],
      cache_ttl_seconds: 300,
      forwards: [{ zone: 'dn42', upstreams: ['172.20.0.1'] }],
    });
    // After the zone's records, its default name server ns1.example.dn42 at the group's bind address (BIND wants one).
    expect((await dnsOf('fra1')).zones[0].records).to.deep.equal([
      { name: 'www', type: 'A', content: '172.20.0.80', ttl: null },
      { name: 'ns1', type: 'A', content: '172.20.0.53', ttl: null },
    ]);
    // The same group again changes nothing.
    await join('fra1', g);
    expect(await generation('fra1')).to.equal(before + 1);
    expect(await eventsAfter(position)).to.have.length(3);
  });

  it('refuses an unknown group (400), an unknown node (404) and a bad body (422), writing nothing', async () => {
    await c.admin.post('/admin/nodes', node('fra1'));
    const position = await head();
    expectResponse(await c.admin.put('/admin/nodes/fra1/dns-group', { dns_group_id: 999 }))
      .status(400)
      .detail('unknown dns group 999');
    const g = await group(c.admin, 'anycast');
    const afterGroup = await head();
    expectResponse(await c.admin.put('/admin/nodes/ghost/dns-group', { dns_group_id: g }))
      .status(404)
      .detail('unknown node ghost');
    expectResponse(await c.admin.put('/admin/nodes/fra1/dns-group', { dns_group_id: 'one' })).status(422);
    expectResponse(await c.admin.put('/admin/nodes/fra1/dns-group', {})).status(422);
    expect(afterGroup).to.be.greaterThan(position);
    expect(await head()).to.equal(afterGroup);
    await c.admin.delete(`/admin/dns-groups/${g}`);
    expectResponse(await c.admin.put('/admin/nodes/fra1/dns-group', { dns_group_id: g }))
      .status(400)
      .detail(`unknown dns group ${g}`);
  });

  it('a record write moves three member nodes to new generations in ONE append and rings each doorbell after commit', async () => {
    for (const [id, n] of [
      ['fra1', 1],
      ['ams1', 2],
      ['zrh1', 3],
      ['ber1', 4],
    ] as const)
      await publishedNode(c.admin, id, n);
    const g = await group(c.admin, 'anycast');
    const z = await zone(c.admin, g, 'example.dn42');
    for (const id of ['fra1', 'ams1', 'zrh1']) await join(id, g);
    const token = (await issueAgentToken(c.url, ADMIN_TOKEN, 'ams1')).token;
    const agent = agentSocket(c.url, 'ws/ams1', token);
    await agent.next('hello');
    const generations = Object.fromEntries(await Promise.all(['fra1', 'ams1', 'zrh1', 'ber1'].map(async (id) => [id, await generation(id)] as const)));
    c.sys.broadcaster.calls.length = 0;
    const position = await head();

    const res = await c.admin.post(`/admin/dns-groups/${g}/zones/${z}/records`, { name: 'ns1', type: 'AAAA', content: 'fd42::53' });
    expectResponse(res).status(201);

    const events = await eventsAfter(position);
    expect(events.map((e) => [e.stream_id, e.type])).to.have.deep.members([
      [`dnsgroup-${g}`, 'DnsRecordCreated'],
      ['desired-state-ams1', 'DesiredStatePublished'],
      ['desired-state-fra1', 'DesiredStatePublished'],
      ['desired-state-zrh1', 'DesiredStatePublished'],
    ]);
    expect(new Set(events.map((e) => e.tx)).size, 'one transaction').to.equal(1);
    for (const id of ['fra1', 'ams1', 'zrh1']) {
      expect(await generation(id)).to.equal(generations[id] + 1);
      const state = (await c.admin.get(`/admin/nodes/${id}/desired-state`)).body.state;
      expect(validateDesiredState(state)).to.deep.equal({ ok: true });
      expect(state.dns.zones).to.deep.equal([
        {
          zone: 'example.dn42',
          primary_ns: 'ns1.example.dn42',
          admin_email: 'hostmaster@example.dn42',
          soa_serial: 2,
          ...ZONE_SOA_DEFAULTS,
          records: [{ name: 'ns1', type: 'AAAA', content: 'fd42::53', ttl: null }],
        },
      ]);
    }
    expect(await generation('ber1')).to.equal(generations.ber1);
    expect(c.sys.broadcaster.published.map((p) => [p.node_id, p.generation])).to.have.deep.members([
      ['ams1', generations.ams1 + 1],
      ['fra1', generations.fra1 + 1],
      ['zrh1', generations.zrh1 + 1],
    ]);
    expect(await agent.next('desired_state_updated')).to.deep.include({ type: 'desired_state_updated', generation: generations.ams1 + 1 });
    await agent.close();
  });

  it('every group, zone and record write re-materialises the members; a disabled group, zone or record leaves the document', async () => {
    await publishedNode(c.admin, 'fra1', 1);
    const g = await group(c.admin, 'anycast');
    await join('fra1', g);
    const step = async (write: () => Promise<{ status: number; text: string }>) => {
      const before = await generation('fra1');
      const res = await write();
      expect(res.status, res.text).to.be.within(200, 299);
      expect(await generation('fra1'), res.text).to.equal(before + 1);
      return dnsOf('fra1');
    };
    const z = await zone(c.admin, g, 'example.dn42');
    expect((await dnsOf('fra1')).zones.map((x: { zone: string }) => x.zone)).to.deep.equal(['example.dn42']);
    const rec = (await c.admin.post(`/admin/dns-groups/${g}/zones/${z}/records`, { name: 'a', type: 'A', content: '172.20.0.1' })).body.record.id;
    let dns = await step(() => c.admin.patch(`/admin/dns-groups/${g}/zones/${z}/records/${rec}`, { enabled: false }));
    // Only the address the server gives the default name server ns1.example.dn42 is left.
    expect(dns.zones[0].records).to.deep.equal([{ name: 'ns1', type: 'A', content: '172.20.0.53', ttl: null }]);
    dns = await step(() => c.admin.patch(`/admin/dns-groups/${g}/zones/${z}`, { enabled: false }));
    expect(dns.zones).to.deep.equal([]);
    dns = await step(() => c.admin.patch(`/admin/dns-groups/${g}/zones/${z}`, { enabled: true }));
    const serial = dns.zones[0].soa_serial;
    dns = await step(() => c.admin.patch(`/admin/dns-groups/${g}`, { enabled: false }));
    expect(dns).to.equal(null);
    dns = await step(() => c.admin.patch(`/admin/dns-groups/${g}`, { enabled: true, cache_ttl_seconds: 60 }));
    expect(dns).to.deep.include({ cache_ttl_seconds: 60 });
    // A group-level change leaves the zone's serial where it was.
    expect(dns.zones[0].soa_serial).to.equal(serial);
    dns = await step(() => c.admin.delete(`/admin/dns-groups/${g}/zones/${z}/records/${rec}`));
    expect(dns.zones[0].soa_serial).to.be.greaterThan(serial);
    dns = await step(() => c.admin.delete(`/admin/dns-groups/${g}/zones/${z}`));
    expect(dns.zones).to.deep.equal([]);
  });

  it('a write to the node itself keeps its dns section (materialisation reads the group)', async () => {
    await publishedNode(c.admin, 'fra1', 1);
    const g = await group(c.admin, 'anycast');
    await zone(c.admin, g, 'example.dn42');
    await join('fra1', g);
    const dns = await dnsOf('fra1');
    await c.admin.patch('/admin/nodes/fra1', { labels: { tier: 'edge' } });
    await c.admin.post('/admin/nodes/fra1/interfaces', { spec: { name: 'dn42_b', listen_port: 51810 } });
    expect(await dnsOf('fra1')).to.deep.equal(dns);
    await c.admin.post('/admin/nodes/fra1/decommission');
    expect(await dnsOf('fra1')).to.equal(null);
    await c.admin.post('/admin/nodes/fra1/recommission');
    expect(await dnsOf('fra1')).to.deep.equal(dns);
  });

  it('moving a node between groups and clearing it updates both groups in one append; member_count follows', async () => {
    await publishedNode(c.admin, 'fra1', 1);
    const a = await group(c.admin, 'a');
    const b = await group(c.admin, 'b');
    await join('fra1', a);
    const position = await head();
    await join('fra1', b);
    const events = await eventsAfter(position);
    expect(events.map((e) => [e.stream_id, e.type]).sort()).to.deep.equal([
      ['desired-state-fra1', 'DesiredStatePublished'],
      [`dnsgroup-${a}`, 'DnsGroupMemberLeft'],
      [`dnsgroup-${b}`, 'DnsGroupMemberJoined'],
      ['node-fra1', 'NodeDnsGroupAssigned'],
    ]);
    expect(new Set(events.map((e) => e.tx)).size).to.equal(1);
    expect((await c.admin.get(`/admin/dns-groups/${a}`)).body.member_count).to.equal(0);
    expect((await c.admin.get(`/admin/dns-groups/${b}`)).body.member_count).to.equal(1);
    expect((await dnsOf('fra1')).group_name).to.equal('b');
    // A write to group a no longer touches fra1.
    const gen = await generation('fra1');
    await c.admin.post(`/admin/dns-groups/${a}/zones`, { zone: 'a.dn42' });
    expect(await generation('fra1')).to.equal(gen);
    await join('fra1', null);
    expect(await dnsOf('fra1')).to.equal(null);
    expect((await c.admin.get(`/admin/dns-groups/${b}`)).body.member_count).to.equal(0);
  });

  it('deleting a group clears every member in the same append and publishes them without DNS; a decommissioned member is not published', async () => {
    for (const [id, n] of [
      ['fra1', 1],
      ['ams1', 2],
      ['old1', 3],
    ] as const)
      await publishedNode(c.admin, id, n);
    await c.admin.post('/admin/nodes', node('new1', { router_id: '172.20.0.9' }));
    const g = await group(c.admin, 'anycast');
    await zone(c.admin, g, 'example.dn42');
    for (const id of ['fra1', 'ams1', 'old1']) await join(id, g);
    await c.admin.post('/admin/nodes/old1/decommission');
    // An unpublished node that joins is published by its own write (like a child write).
    await join('new1', g);
    expect(await generation('new1')).to.equal(1);
    c.sys.broadcaster.calls.length = 0;
    const gens = { fra1: await generation('fra1'), ams1: await generation('ams1'), old1: await generation('old1') };
    const position = await head();

    expectResponse(await c.admin.delete(`/admin/dns-groups/${g}`)).status(204);

    const events = await eventsAfter(position);
    expect(new Set(events.map((e) => e.tx)).size).to.equal(1);
    expect(
      events
        .filter((e) => e.type === 'NodeDnsGroupAssigned')
        .map((e) => e.stream_id)
        .sort(),
    ).to.deep.equal(['node-ams1', 'node-fra1', 'node-new1', 'node-old1']);
    expect(
      events
        .filter((e) => e.type === 'DesiredStatePublished')
        .map((e) => e.stream_id)
        .sort(),
    ).to.deep.equal(['desired-state-ams1', 'desired-state-fra1', 'desired-state-new1']);
    expect(events.some((e) => e.type === 'DnsGroupDeleted')).to.equal(true);
    for (const id of ['fra1', 'ams1', 'new1', 'old1']) expectResponse(await c.admin.get(`/admin/nodes/${id}`)).body({ dns_group_id: null });
    for (const id of ['fra1', 'ams1']) {
      expect(await generation(id)).to.equal(gens[id as 'fra1' | 'ams1'] + 1);
      expect(await dnsOf(id)).to.equal(null);
    }
    expect(await generation('old1')).to.equal(gens.old1);
    expect(c.sys.broadcaster.published.map((p) => p.node_id).sort()).to.deep.equal(['ams1', 'fra1', 'new1']);
  });

  it('deleting a member node leaves its group in the same append; the id created again is no member and group writes skip it', async () => {
    for (const [id, n] of [
      ['fra1', 1],
      ['old1', 2],
    ] as const)
      await publishedNode(c.admin, id, n);
    const g = await group(c.admin, 'anycast');
    for (const id of ['fra1', 'old1']) await join(id, g);
    expectResponse(await c.admin.post('/admin/nodes/old1/decommission')).status(200);
    const position = await head();

    expectResponse(await c.admin.delete('/admin/nodes/old1')).status(204);

    const events = await eventsAfter(position);
    expect(events.map((e) => [e.stream_id, e.type])).to.deep.include.members([
      ['node-old1', 'NodeDeleted'],
      [`dnsgroup-${g}`, 'DnsGroupMemberLeft'],
    ]);
    expect(new Set(events.map((e) => e.tx)).size, 'one transaction').to.equal(1);
    const members = await c.sys.pool.query(
      `SELECT data->>'node_id' AS node_id, type FROM events WHERE stream_id = $1 AND type LIKE 'DnsGroupMember%' ORDER BY position`,
      [`dnsgroup-${g}`],
    );
    expect(members.rows.map((r) => [r.type, r.node_id])).to.deep.equal([
      ['DnsGroupMemberJoined', 'fra1'],
      ['DnsGroupMemberJoined', 'old1'],
      ['DnsGroupMemberLeft', 'old1'],
    ]);
    expect((await c.admin.get(`/admin/dns-groups/${g}`)).body.member_count).to.equal(1);

    // Created again, the id starts outside the group; a group write neither publishes nor reads it.
    await publishedNode(c.admin, 'old1', 3);
    expectResponse(await c.admin.get('/admin/nodes/old1')).body({ dns_group_id: null });
    const before = await generation('old1');
    const again = await head();
    expectResponse(await c.admin.post(`/admin/dns-groups/${g}/zones`, { zone: 'example.dn42' })).status(201);
    expect((await eventsAfter(again)).map((e) => e.stream_id)).to.not.include('desired-state-old1');
    expect(await generation('old1')).to.equal(before);
    // A node outside any group deletes without touching a group stream.
    await c.admin.post('/admin/nodes/old1/decommission');
    const last = await head();
    expectResponse(await c.admin.delete('/admin/nodes/old1')).status(204);
    expect((await eventsAfter(last)).filter((e) => e.stream_id.startsWith('dnsgroup-'))).to.deep.equal([]);
  });

  it('concurrent joins and record writes never leave a member with a stale zone', async () => {
    const ids = ['fra1', 'ams1', 'zrh1'];
    for (const [i, id] of ids.entries()) await publishedNode(c.admin, id, i + 1);
    const g = await group(c.admin, 'anycast');
    const z = await zone(c.admin, g, 'example.dn42');
    const writes = [
      ...ids.map((id) => c.admin.put(`/admin/nodes/${id}/dns-group`, { dns_group_id: g })),
      ...[1, 2, 3, 4, 5].map((n) => c.admin.post(`/admin/dns-groups/${g}/zones/${z}/records`, { name: `h${n}`, type: 'A', content: `172.20.0.${n}` })),
    ];
    for (const res of await Promise.all(writes)) expect(res.status, res.text).to.be.within(200, 201);
    for (const id of ids) {
      const names = (await dnsOf(id)).zones[0].records.map((r: { name: string }) => r.name).sort();
      expect(names, id).to.deep.equal(['h1', 'h2', 'h3', 'h4', 'h5', 'ns1']);
    }
    expect((await c.admin.get(`/admin/dns-groups/${g}`)).body.member_count).to.equal(3);
  });

  it('a projection rebuild reproduces the DNS answers and members', async () => {
    await publishedNode(c.admin, 'fra1', 1);
    const g = await group(c.admin, 'anycast');
    const z = await zone(c.admin, g, 'example.dn42');
    await c.admin.post(`/admin/dns-groups/${g}/zones/${z}/records`, { name: 'b', type: 'TXT', content: 'hello', sort_order: 2 });
    const r = (await c.admin.post(`/admin/dns-groups/${g}/zones/${z}/records`, { name: 'a', type: 'A', content: '172.20.0.1' })).body.record.id;
    await c.admin.patch(`/admin/dns-groups/${g}/zones/${z}/records/${r}`, { ttl: 30 });
    await c.admin.patch(`/admin/dns-groups/${g}`, { name: 'renamed', bind_addresses: ['fd42::53'] });
    await join('fra1', g);
    const gone = await zone(c.admin, g, 'gone.dn42');
    await c.admin.delete(`/admin/dns-groups/${g}/zones/${gone}`);
    const snapshot = async () =>
      JSON.stringify([
        (await c.admin.get('/admin/dns-groups')).body,
        (await c.admin.get(`/admin/dns-groups/${g}/zones`)).body,
        (await c.admin.get(`/admin/dns-groups/${g}/zones/${z}/records`)).body,
        (await c.admin.get('/admin/nodes/fra1')).body,
      ]);
    const before = await snapshot();
    const progress = await c.sys.projections.rebuild();
    expect(progress.map((p) => p.projection)).to.include('dns');
    expect(await snapshot()).to.equal(before);
  });
});
