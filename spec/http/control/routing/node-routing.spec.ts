import { expect } from 'chai';
import { expectResponse } from '../../../support/http.js';
import { startAgents, type AgentHarness } from '../agent/telemetry-support.js';
import { documentedBy, expect422, postTable, route } from './support.js';

const A1 = 4242420001;
const A2 = 4242420002;
const A3 = 4242420003;
/** Short AS numbers whose digits are inside the longer ones: boundary matching must tell them apart. */
const SHORT = 4242420;
const SHORT_ISH = 42424201;

/** n1's first table: both families, every RPKI state, a local route; listed out of address order on purpose. */
const TABLE_A = [
  route('172.20.16.0/20', A2, [A2], { rpki: 'invalid' }),
  route('fd42:2::/48', SHORT, [A2, SHORT], { rpki: 'not_found' }),
  route('172.20.0.0/24', A1, [A1], { protocol: 'ebgp_alpha' }),
  route('fd42:1::/48', A3, [A2, SHORT, A3]),
  route('172.22.0.0/24', null, [], { protocol: 'static_local', rpki: null, local: true }),
  route('172.20.1.0/24', SHORT_ISH, [A2, SHORT_ISH], { rpki: 'not_found' }),
];

const prefixesOf = (body: { routes: { prefix: string }[] }) => body.routes.map((r) => r.prefix);

describe('control: node routing analytics (/admin/nodes/{id}/routing/*, /ui/nodes/{id}/routing/dashboard)', function () {
  this.timeout(60_000);
  let h: AgentHarness;

  before(async () => {
    h = await startAgents(['n1', 'n2', 'n3', 'n4', 'n5']);
    await postTable(h.agent.n1, 'n1', '2026-11-01T11:58:00Z', TABLE_A);
    await postTable(
      h.agent.n2,
      'n2',
      '2026-11-01T11:58:00Z',
      [route('172.20.0.0/24', A1, [A1], { rpki: null }), route('172.20.1.0/24', A2, [A2], { rpki: null })],
      false,
    );
  });
  after(async () => h?.close());

  describe('no table', () => {
    for (const path of ['summary', 'origins', 'prefixes', 'timeline']) {
      it(`answers 404 on ${path} for an unknown node and for a node that never sent a table`, async () => {
        expectResponse(await h.admin.get(`/admin/nodes/ghost/routing/${path}`))
          .status(404)
          .detail('unknown node ghost');
        expectResponse(await h.admin.get(`/admin/nodes/n4/routing/${path}`))
          .status(404)
          .detail('no routing table reported for node n4');
      });
    }

    it('answers 404 on the routing dashboard the same way', async () => {
      expectResponse(await h.admin.get('/ui/nodes/ghost/routing/dashboard'))
        .status(404)
        .detail('unknown node ghost');
      expectResponse(await h.admin.get('/ui/nodes/n4/routing/dashboard'))
        .status(404)
        .detail('no routing table reported for node n4');
    });
  });

  describe('summary', () => {
    it('counts sizes, origins, RPKI states and the two distributions of the latest table', async () => {
      const res = await h.admin.get('/admin/nodes/n1/routing/summary');
      expectResponse(res).status(200);
      const { observation_id, received_at, ...rest } = res.body;
      expect(observation_id).to.be.a('number');
      expect(received_at).to.equal('2026-11-01T12:00:00.000Z'); // the injected clock
      expect(rest).to.deep.equal({
        node_id: 'n1',
        captured_at: '2026-11-01T11:58:00.000Z',
        rpki_observed: true,
        size: 6,
        size_v4: 4,
        size_v6: 2,
        local: 1,
        external: 5,
        as_count: 5,
        as_count_v4: 3,
        as_count_v6: 2,
        rpki: { valid: 2, invalid: 1, not_found: 2 },
        rpki_v4: { valid: 1, invalid: 1, not_found: 1 },
        rpki_v6: { valid: 1, invalid: 0, not_found: 1 },
        prefix_lengths: {
          v4: [
            { length: 20, count: 1 },
            { length: 24, count: 3 },
          ],
          v6: [{ length: 48, count: 2 }],
        },
        as_path_lengths: [
          { length: 0, count: 1 },
          { length: 1, count: 2 },
          { length: 2, count: 2 },
          { length: 3, count: 1 },
        ],
        announced: null,
        withdrawn: null,
      });
    });

    it('has null RPKI distributions (not zeros) when the agent could not observe RPKI', async () => {
      const { body } = await h.admin.get('/admin/nodes/n2/routing/summary');
      expect(body).to.deep.include({ rpki_observed: false, rpki: null, rpki_v4: null, rpki_v6: null, size: 2, as_count: 2 });
    });
  });

  describe('origins', () => {
    it('lists origin ASNs by distinct prefixes then ASN, names null without a replica, and honours limit', async () => {
      const res = await h.admin.get('/admin/nodes/n1/routing/origins');
      expectResponse(res).status(200);
      expect(res.body).to.deep.equal({
        node_id: 'n1',
        captured_at: '2026-11-01T11:58:00.000Z',
        origins: [
          { asn: SHORT, name: null, count: 1, count_v4: 0, count_v6: 1 },
          { asn: SHORT_ISH, name: null, count: 1, count_v4: 1, count_v6: 0 },
          { asn: A1, name: null, count: 1, count_v4: 1, count_v6: 0 },
          { asn: A2, name: null, count: 1, count_v4: 1, count_v6: 0 },
          { asn: A3, name: null, count: 1, count_v4: 0, count_v6: 1 },
        ],
      });
      expect((await h.admin.get('/admin/nodes/n1/routing/origins?limit=2')).body.origins.map((o: { asn: number }) => o.asn)).to.deep.equal([SHORT, SHORT_ISH]);
    });

    it('refuses a limit outside 1 to 1000 and unknown parameters (422)', async () => {
      for (const q of ['limit=0', 'limit=1001', 'limit=x', 'limit=1.5', 'sort=v4']) await expect422(h.admin, `/admin/nodes/n1/routing/origins?${q}`);
      expectResponse(await h.admin.get('/admin/nodes/n1/routing/origins?limit=1000')).status(200);
    });
  });

  describe('prefix search', () => {
    const search = async (query: string) => {
      const res = await h.admin.get(`/admin/nodes/n1/routing/prefixes${query ? `?${query}` : ''}`);
      expectResponse(res).status(200);
      return res.body;
    };

    it('answers the whole table in address order (IPv4 first) with the paging fields, rpki_counts and as_names', async () => {
      const body = await search('');
      expect(prefixesOf(body)).to.deep.equal(['172.20.0.0/24', '172.20.1.0/24', '172.20.16.0/20', '172.22.0.0/24', 'fd42:1::/48', 'fd42:2::/48']);
      expect(body).to.deep.include({ node_id: 'n1', captured_at: '2026-11-01T11:58:00.000Z', rpki_observed: true, total: 6, limit: 100, offset: 0 });
      expect(body.rpki_counts).to.deep.equal({ valid: 2, invalid: 1, not_found: 2 });
      expect(body.as_names).to.deep.equal({}); // no replica attached
      expect(body.routes[4]).to.deep.equal({
        prefix: 'fd42:1::/48',
        family: 6,
        protocol: 'ebgp_beta',
        origin_asn: A3,
        as_path: [A2, SHORT, A3],
        rpki: 'valid',
        local: false,
      });
      expect(body.routes[3]).to.deep.equal({
        prefix: '172.22.0.0/24',
        family: 4,
        protocol: 'static_local',
        origin_asn: null,
        as_path: [],
        rpki: null,
        local: true,
      });
    });

    it('filters by family and scope', async () => {
      expect(prefixesOf(await search('family=6'))).to.deep.equal(['fd42:1::/48', 'fd42:2::/48']);
      expect((await search('family=6')).rpki_counts).to.deep.equal({ valid: 1, invalid: 0, not_found: 1 });
      expect(prefixesOf(await search('family=4&scope=local'))).to.deep.equal(['172.22.0.0/24']);
      expect((await search('scope=local')).rpki_counts).to.deep.equal({ valid: 0, invalid: 0, not_found: 0 });
      expect((await search('scope=external')).total).to.equal(5);
      expect((await search('scope=all')).total).to.equal(6);
    });

    it('matches q against the prefix and protocol (case-insensitive substring) and the origin ASN, AS prefix optional', async () => {
      expect(prefixesOf(await search('q=172.20.1'))).to.deep.equal(['172.20.1.0/24', '172.20.16.0/20']);
      expect(prefixesOf(await search('q=EBGP_ALPHA'))).to.deep.equal(['172.20.0.0/24']);
      expect(prefixesOf(await search('q=AS4242420003'))).to.deep.equal(['fd42:1::/48']);
      expect(prefixesOf(await search('q=as4242420003'))).to.deep.equal(['fd42:1::/48']);
      // q is a text search: the digits 4242420 are inside every origin here.
      expect((await search('q=4242420')).total).to.equal(5);
      // LIKE wildcards in q are literal characters.
      expect((await search(`q=${encodeURIComponent('%')}`)).total).to.equal(0);
      expect((await search(`q=${encodeURIComponent('172.2_.0')}`)).total).to.equal(0);
      expect((await search('q=')).total).to.equal(6);
    });

    it('matches path_asn as a whole hop, the origin hop included: AS4242420 never matches AS42424201', async () => {
      expect(prefixesOf(await search(`path_asn=${SHORT}`))).to.deep.equal(['fd42:1::/48', 'fd42:2::/48']);
      expect(prefixesOf(await search(`path_asn=${SHORT_ISH}`))).to.deep.equal(['172.20.1.0/24']);
      expect(prefixesOf(await search(`path_asn=${A2}`))).to.deep.equal(['172.20.1.0/24', '172.20.16.0/20', 'fd42:1::/48', 'fd42:2::/48']);
      expect(prefixesOf(await search(`path_asn=${A1}`))).to.deep.equal(['172.20.0.0/24']);
      expect((await search('path_asn=42')).total).to.equal(0);
      // Combined with q: both conditions hold.
      expect(prefixesOf(await search(`path_asn=${SHORT}&q=fd42:2`))).to.deep.equal(['fd42:2::/48']);
      expect((await search(`path_asn=${SHORT}`)).rpki_counts).to.deep.equal({ valid: 1, invalid: 0, not_found: 1 });
    });

    it('filters by rpki state while rpki_counts keep every other condition and ignore the rpki one', async () => {
      const invalid = await search('rpki=invalid');
      expect(prefixesOf(invalid)).to.deep.equal(['172.20.16.0/20']);
      expect(invalid.total).to.equal(1);
      expect(invalid.rpki_counts).to.deep.equal({ valid: 2, invalid: 1, not_found: 2 });
      const v6NotFound = await search('rpki=not_found&family=6');
      expect(prefixesOf(v6NotFound)).to.deep.equal(['fd42:2::/48']);
      expect(v6NotFound.rpki_counts).to.deep.equal({ valid: 1, invalid: 0, not_found: 1 });
    });

    it('pages with limit and offset; total counts every match', async () => {
      const page = await search('limit=2&offset=1');
      expect(prefixesOf(page)).to.deep.equal(['172.20.1.0/24', '172.20.16.0/20']);
      expect(page).to.deep.include({ total: 6, limit: 2, offset: 1 });
      const beyond = await search('offset=10');
      expect(beyond).to.deep.include({ total: 6, routes: [] });
      expect(prefixesOf(await search('limit=1000&offset=5'))).to.deep.equal(['fd42:2::/48']);
    });

    it('has rpki_counts null (not zeros) when the table has rpki_observed false', async () => {
      const res = await h.admin.get('/admin/nodes/n2/routing/prefixes');
      expect(res.body).to.deep.include({ rpki_observed: false, total: 2, rpki_counts: null });
      expect((await h.admin.get('/admin/nodes/n2/routing/prefixes?rpki=valid')).body).to.deep.include({ total: 0, routes: [], rpki_counts: null });
    });

    it('refuses every bad parameter with 422', async () => {
      const bad = [
        'family=5',
        'family=ipv4',
        'scope=internal',
        `q=${'x'.repeat(129)}`,
        'rpki=notfound',
        'rpki=unknown',
        'path_asn=0',
        'path_asn=4294967296',
        'path_asn=AS4242420001',
        'path_asn=-1',
        'limit=0',
        'limit=1001',
        'offset=-1',
        'offset=1.5',
        'offset=1e30',
        'limit=1&limit=2',
        'asn=1',
      ];
      for (const q of bad) await expect422(h.admin, `/admin/nodes/n1/routing/prefixes?${q}`);
      expectResponse(await h.admin.get(`/admin/nodes/n1/routing/prefixes?q=${'x'.repeat(128)}`)).status(200);
    });
  });

  describe('churn and timeline', () => {
    it('stores announced and withdrawn prefixes against the previous table when a table arrives; the first has null', async () => {
      await postTable(h.agent.n3, 'n3', '2026-10-31T11:55:00Z', [route('172.20.0.0/24', A1, [A1]), route('172.20.1.0/24', A1, [A1])]);
      await postTable(h.agent.n3, 'n3', '2026-11-01T11:52:00Z', [
        route('172.20.0.0/24', A1, [A1]),
        route('172.20.1.0/24', A1, [A1]),
        route('172.20.2.0/24', A2, [A2]),
      ]);
      await postTable(h.agent.n3, 'n3', '2026-11-01T11:55:00Z', [
        route('172.20.0.0/24', A1, [A1]),
        route('172.20.0.0/24', A2, [A2, A1], { protocol: 'ebgp_gamma' }), // a second path to a prefix is not churn
        route('172.20.2.0/24', A2, [A2]),
        route('fd42:1::/48', A2, [A2]),
        route('fd42:2::/48', A2, [A2]),
      ]);
      h.sys.clock.advance(5 * 60_000); // 12:05
      await postTable(h.agent.n3, 'n3', '2026-11-01T12:01:00Z', [route('172.20.0.0/24', A1, [A1])]);

      const res = await h.admin.get('/admin/nodes/n3/routing/timeline');
      expectResponse(res).status(200);
      const rows = res.body.observations.map(({ captured_at, size, size_v4, size_v6, announced, withdrawn, rpki_observed }: Record<string, unknown>) => ({
        captured_at,
        size,
        size_v4,
        size_v6,
        announced,
        withdrawn,
        rpki_observed,
      }));
      expect(rows).to.deep.equal([
        { captured_at: '2026-10-31T11:55:00.000Z', size: 2, size_v4: 2, size_v6: 0, announced: null, withdrawn: null, rpki_observed: true },
        { captured_at: '2026-11-01T11:52:00.000Z', size: 3, size_v4: 3, size_v6: 0, announced: 1, withdrawn: 0, rpki_observed: true },
        { captured_at: '2026-11-01T11:55:00.000Z', size: 5, size_v4: 3, size_v6: 2, announced: 2, withdrawn: 1, rpki_observed: true },
        { captured_at: '2026-11-01T12:01:00.000Z', size: 1, size_v4: 1, size_v6: 0, announced: 0, withdrawn: 3, rpki_observed: true },
      ]);
      expect(res.body.observations[3]).to.include({ node_id: 'n3', received_at: '2026-11-01T12:05:00.000Z' });
      expect((await h.admin.get('/admin/nodes/n3/routing/summary')).body).to.include({ announced: 0, withdrawn: 3, size: 1 });

      const latestTwo = (await h.admin.get('/admin/nodes/n3/routing/timeline?limit=2')).body.observations;
      expect(latestTwo.map((o: { captured_at: string }) => o.captured_at)).to.deep.equal(['2026-11-01T11:55:00.000Z', '2026-11-01T12:01:00.000Z']);
      for (const q of ['limit=0', 'limit=501', 'limit=abc', 'range=24h']) await expect422(h.admin, `/admin/nodes/n3/routing/timeline?${q}`);
      expect((await h.admin.get('/admin/nodes/n3/routing/timeline?limit=500')).body.observations).to.have.length(4);
    });

    it('serialises two tables of one node that arrive together: the later one compares with the earlier one', async () => {
      const first = [route('172.20.0.0/24', A1, [A1]), route('172.20.1.0/24', A1, [A1])];
      const second = [route('172.20.1.0/24', A1, [A1]), route('172.20.2.0/24', A1, [A1]), route('172.20.3.0/24', A1, [A1])];
      await Promise.all([postTable(h.agent.n5, 'n5', '2026-11-01T11:50:00Z', first), postTable(h.agent.n5, 'n5', '2026-11-01T11:50:00Z', second)]);
      const observations = (await h.admin.get('/admin/nodes/n5/routing/timeline')).body.observations.sort(
        (a: { id: number }, b: { id: number }) => a.id - b.id,
      );
      // Whichever came first has nothing to compare with; the other compares with it (1 kept, so 1 and 2 changes either way).
      const churn = observations.map((o: { size: number; announced: number | null; withdrawn: number | null }) => [o.size, o.announced, o.withdrawn]);
      expect(JSON.stringify(churn)).to.be.oneOf(['[[2,null,null],[3,2,1]]', '[[3,null,null],[2,1,2]]']);
      const latest = observations[1];
      expect((await h.admin.get('/admin/nodes/n5/routing/summary')).body).to.include({ observation_id: latest.id, size: latest.size });
      expect((await h.admin.get('/admin/nodes/n5/routing/prefixes')).body.total).to.equal(latest.size);
    });

    it('puts size and churn on the range grid at the agent capture time; compare adds the preceding window', async () => {
      // Now 12:05 (after the test above). 24h: 144 buckets of 10 minutes, the last holding now.
      const res = await h.admin.get('/ui/nodes/n3/routing/dashboard?compare=1');
      expectResponse(res).status(200);
      const { timeline, summary, origins, generated_at } = res.body;
      expect(generated_at).to.equal('2026-11-01T12:05:00.000Z');
      expect(summary).to.deep.equal((await h.admin.get('/admin/nodes/n3/routing/summary')).body);
      expect(origins).to.deep.equal((await h.admin.get('/admin/nodes/n3/routing/origins')).body.origins);
      expect(timeline).to.include({ range: '24h', bucket_seconds: 600 });
      expect(timeline.points).to.have.length(144);
      expect(timeline.points_previous).to.have.length(144);
      expect(timeline.points[0].at).to.equal('2026-10-31T12:10:00.000Z');
      expect(timeline.points[143]).to.deep.equal({ at: '2026-11-01T12:00:00.000Z', size: 1, size_v4: 1, size_v6: 0, announced: 0, withdrawn: 3 });
      // 11:52 and 11:55 share the 11:50 bucket: its last size, churn summed.
      expect(timeline.points[142]).to.deep.equal({ at: '2026-11-01T11:50:00.000Z', size: 5, size_v4: 3, size_v6: 2, announced: 3, withdrawn: 1 });
      expect(timeline.points.slice(0, 142).every((p: { size: unknown; announced: unknown }) => p.size === null && p.announced === null)).to.equal(true);
      // The previous window is index-aligned: the same bucket a day earlier.
      expect(timeline.points_previous[142]).to.deep.equal({
        at: '2026-10-31T11:50:00.000Z',
        size: 2,
        size_v4: 2,
        size_v6: 0,
        announced: null,
        withdrawn: null,
      });
      expect(timeline.points_previous.filter((p: { size: unknown }) => p.size !== null)).to.have.length(1);
    });

    it('takes range (6h: 72 buckets of 5 minutes), leaves points_previous null without compare, and refuses other values', async () => {
      const { timeline } = (await h.admin.get('/ui/nodes/n3/routing/dashboard?range=6h&compare=0')).body;
      expect(timeline).to.include({ range: '6h', bucket_seconds: 300, points_previous: null });
      expect(timeline.points).to.have.length(72);
      expect(timeline.points.slice(68).map((p: { at: string; size: number | null }) => [p.at.slice(11, 16), p.size])).to.deep.equal([
        ['11:50', 3],
        ['11:55', 5],
        ['12:00', 1],
        ['12:05', null],
      ]);
      expect((await h.admin.get('/ui/nodes/n3/routing/dashboard?range=7d')).body.timeline.points).to.have.length(168);
      expect((await h.admin.get('/ui/nodes/n3/routing/dashboard?range=30d')).body.timeline.points).to.have.length(180);
      for (const q of ['range=1h', 'range=24', 'compare=2', 'compare=true', 'origins_top=5']) await expect422(h.admin, `/ui/nodes/n3/routing/dashboard?${q}`);
    });
  });

  it('answers what its OpenAPI document says, for every status of every routing view', async () => {
    const call = await documentedBy(h.admin, h.url);
    const paths = [
      '/admin/nodes/n1/routing/summary',
      '/admin/nodes/n2/routing/summary',
      '/admin/nodes/n4/routing/summary',
      '/admin/nodes/n1/routing/origins?limit=3',
      '/admin/nodes/n1/routing/origins?limit=0',
      '/admin/nodes/ghost/routing/origins',
      '/admin/nodes/n1/routing/prefixes?q=172&family=4',
      '/admin/nodes/n2/routing/prefixes',
      '/admin/nodes/n1/routing/prefixes?rpki=bad',
      '/admin/nodes/n4/routing/prefixes',
      '/admin/nodes/n1/routing/timeline?limit=3',
      '/admin/nodes/n1/routing/timeline?limit=501',
      '/admin/nodes/n4/routing/timeline',
      '/ui/nodes/n1/routing/dashboard?range=6h&compare=1',
      '/ui/nodes/n2/routing/dashboard',
      '/ui/nodes/n1/routing/dashboard?range=1h',
      '/ui/nodes/n4/routing/dashboard',
      '/admin/routing/fleet',
      '/ui/routing/fleet-overview?origins_sort=v6&origins_top=2',
      '/ui/routing/fleet-overview?origins_top=0',
    ];
    const statuses: number[] = [];
    for (const path of paths) statuses.push((await call('GET', path)).status);
    expect(statuses).to.deep.equal([200, 200, 404, 200, 422, 404, 200, 200, 422, 404, 200, 422, 404, 200, 200, 422, 404, 200, 200, 422]);
  });
});
