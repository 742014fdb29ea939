import { join } from 'node:path';
import { expect } from 'chai';
import { renderAll } from '../../agent/render/index.js';
import { zonePath } from '../../agent/render/dns/index.js';
import { validateDesiredState, type DesiredState, type DnsZoneState } from '../../domain/desired-state/schema.js';
import { publishedNode } from '../http/control/dns/support.js';
import { startFleet, type FleetHarness } from '../http/control/fleet/support.js';
import { inTempDir, PRIVATE_KEYS, run, writeRendered } from '../agent/render/support.js';

/**
 * A zone left on its default name server `ns1.<zone>` (or any name server
 * inside the zone) with no address record for it: BIND refuses it (`NS
 * 'ns1.<zone>' has no address records`), which used to fail the apply of every
 * member. Built through the admin API, published, rendered by `renderAll` and
 * handed to the real `named-checkconf -z` and `named-checkzone -k fail`.
 */

const V4 = '172.20.0.53';
const V6 = 'fd42:4242:1::53';

describe('integration: zones on an in-zone name server without an address record', function () {
  this.timeout(60_000);
  let h: FleetHarness;
  beforeEach(async () => {
    h = await startFleet();
  });
  afterEach(() => h.close());

  const ok = async <T = any>(pending: Promise<{ status: number; text: string; body: T }>, status = 200): Promise<T> => {
    const res = await pending;
    expect(res.status, res.text).to.equal(status);
    return res.body;
  };

  /** A group with fra1 as its (published) member. */
  async function memberGroup(bindAddresses: string[]): Promise<number> {
    await publishedNode(h.client, 'fra1', 1);
    const group = await ok<{ id: number }>(h.client.post('/admin/dns-groups', { name: 'anycast', bind_addresses: bindAddresses }), 201);
    await ok(h.client.put('/admin/nodes/fra1/dns-group', { dns_group_id: group.id }));
    return group.id;
  }
  const zone = (groupId: number, body: Record<string, unknown>) =>
    ok<{ zone: { id: number; name_server_problem: string | null } }>(h.client.post(`/admin/dns-groups/${groupId}/zones`, body), 201);
  const record = (groupId: number, zoneId: number, body: Record<string, unknown>) =>
    ok(h.client.post(`/admin/dns-groups/${groupId}/zones/${zoneId}/records`, body), 201);
  const zoneOut = async (groupId: number, zoneId: number) =>
    (await ok<{ id: number }[]>(h.client.get(`/admin/dns-groups/${groupId}/zones`))).find((z) => z.id === zoneId) as any;

  async function published(): Promise<DesiredState> {
    const { state } = await ok<{ state: DesiredState }>(h.client.get('/admin/nodes/fra1/desired-state'));
    expect(validateDesiredState(state)).to.deep.equal({ ok: true });
    return state;
  }
  const zoneIn = (state: DesiredState, name: string): DnsZoneState | undefined => state.dns!.zones.find((z) => z.zone === name);

  /** The document's DNS files as the agent renders them, loaded by BIND's own checkers. */
  async function expectBindLoads(state: DesiredState): Promise<void> {
    await inTempDir(async (dir) => {
      await writeRendered(dir, renderAll({ state, wireguardPrivateKey: PRIVATE_KEYS.fra1, renderedDir: dir }));
      const conf = await run('named-checkconf', ['-z', join(dir, 'dns/named.conf')]);
      expect(conf, conf.stdout + conf.stderr).to.include({ code: 0 });
      for (const z of state.dns!.zones) {
        const r = await run('named-checkzone', ['-k', 'fail', z.zone, join(dir, zonePath(z.zone))]);
        expect(r, `${z.zone}: ${r.stdout}${r.stderr}`).to.include({ code: 0 });
      }
    });
  }

  it('gives an in-zone name server without an address record the group’s bind addresses, until the zone has its own', async () => {
    const g = await memberGroup([V4, V6]);
    // Left on ns1.<zone>, no record at all: the zone must still load.
    const defaults = (await zone(g, { zone: 'defaults.dn42' })).zone;
    // The zone's own name as its name server: the address goes at the apex.
    await zone(g, { zone: 'apex.dn42', primary_ns: 'apex.dn42' });
    // An apex NS record for another in-zone name, which has a TXT but no address.
    const listed = (await zone(g, { zone: 'listed.dn42', primary_ns: 'ns.example.dn42' })).zone.id;
    await record(g, listed, { name: '@', type: 'NS', content: 'ns2' });
    await record(g, listed, { name: 'ns2', type: 'TXT', content: 'anycast' });
    // Out of the zone: nothing to add.
    await zone(g, { zone: 'outside.dn42', primary_ns: 'ns.example.dn42' });

    let state = await published();
    await expectBindLoads(state);
    expect(defaults.name_server_problem, 'nothing to report').to.equal(null);
    const glue = (name: string) => [
      { name, type: 'A', content: V4, ttl: null },
      { name, type: 'AAAA', content: V6, ttl: null },
    ];
    expect(zoneIn(state, 'defaults.dn42')!.records).to.deep.equal(glue('ns1'));
    expect(zoneIn(state, 'apex.dn42')!.records).to.deep.equal(glue('@'));
    expect(zoneIn(state, 'listed.dn42')!.records).to.deep.equal([
      { name: '@', type: 'NS', content: 'ns2', ttl: null },
      { name: 'ns2', type: 'TXT', content: '"anycast"', ttl: null },
      ...glue('ns2'),
    ]);
    expect(zoneIn(state, 'outside.dn42')!.records).to.deep.equal([]);

    // The zone's own address record (any case, one family) replaces the added ones.
    await record(g, defaults.id, { name: 'NS1', type: 'AAAA', content: 'fd42:4242:1::54' });
    state = await published();
    expect(zoneIn(state, 'defaults.dn42')!.records).to.deep.equal([{ name: 'NS1', type: 'AAAA', content: 'fd42:4242:1::54', ttl: null }]);
    await expectBindLoads(state);
  });

  it('without bind addresses leaves such a zone out of the document and says why, until its name server has an address', async () => {
    const g = await memberGroup([]);
    const defaults = (await zone(g, { zone: 'defaults.dn42' })).zone;
    expect(defaults.name_server_problem).to.equal(
      'name server ns1.defaults.dn42 lies inside the zone and has no A or AAAA record, and the group has no bind address to give it; members leave the zone out until it has one',
    );
    await zone(g, { zone: 'outside.dn42', primary_ns: 'ns.example.dn42' });
    let state = await published();
    expect(state.dns!.zones.map((z) => z.zone)).to.deep.equal(['outside.dn42']);
    await expectBindLoads(state);

    // A bind address brings it in (the zone read answers from the group's current addresses), and taking it away leaves it out again.
    const serial = (await zoneOut(g, defaults.id)).soa_serial;
    await ok(h.client.patch(`/admin/dns-groups/${g}`, { bind_addresses: [V4] }));
    expect((await zoneOut(g, defaults.id)).name_server_problem).to.equal(null);
    // The zone's content moved with the group's addresses, so its serial did too.
    expect(zoneIn(await published(), 'defaults.dn42')).to.deep.include({
      soa_serial: serial + 1,
      records: [{ name: 'ns1', type: 'A', content: V4, ttl: null }],
    });
    expect((await zoneOut(g, defaults.id)).soa_serial).to.equal(serial + 1);
    expect(zoneIn(await published(), 'outside.dn42')!.soa_serial, 'a zone the addresses do not touch').to.equal(1);
    await ok(h.client.patch(`/admin/dns-groups/${g}`, { bind_addresses: [] }));
    expect((await zoneOut(g, defaults.id)).name_server_problem).to.match(/^name server ns1.defaults.dn42 lies inside the zone/);
    expect(zoneIn(await published(), 'defaults.dn42')).to.equal(undefined);

    // Create the zone, then its records: the address record brings it in.
    await record(g, defaults.id, { name: 'www', type: 'A', content: '172.20.0.80' });
    expect(zoneIn(await published(), 'defaults.dn42')).to.equal(undefined);
    await record(g, defaults.id, { name: 'ns1', type: 'A', content: '172.20.0.54' });
    expect((await zoneOut(g, defaults.id)).name_server_problem).to.equal(null);
    state = await published();
    expect(zoneIn(state, 'defaults.dn42')!.records.map((r) => r.name)).to.deep.equal(['www', 'ns1']);
    await expectBindLoads(state);
  });

  it('leaves out a zone whose in-zone name server is a CNAME (BIND refuses it, and an address beside it too), even with bind addresses', async () => {
    const g = await memberGroup([V4]);
    const alias = (await zone(g, { zone: 'alias.dn42' })).zone.id;
    await record(g, alias, { name: 'www', type: 'A', content: '172.20.0.80' });
    await record(g, alias, { name: 'ns1', type: 'CNAME', content: 'www' });
    expect((await zoneOut(g, alias)).name_server_problem).to.equal('name server ns1.alias.dn42 is a CNAME; members leave the zone out until it is not');
    await zone(g, { zone: 'defaults.dn42' });
    const state = await published();
    expect(state.dns!.zones.map((z) => z.zone)).to.deep.equal(['defaults.dn42']);
    await expectBindLoads(state);
  });
});
