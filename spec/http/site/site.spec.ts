import { createHash } from 'node:crypto';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { expect } from 'chai';
import { CACHE_CONTROL, type SitePath } from '../../../http/site/app.js';
import { readSavedSnapshot, saveSnapshot } from '../../../http/site/snapshot.js';
import { createRegistryApp } from '../../../http/registry/app.js';
import { loadConfig } from '../../../infra/config.js';
import { migrate } from '../../../infra/db/migrate.js';
import { registryMigrations } from '../../../infra/registry/store.js';
import { RegistrySyncer } from '../../../infra/registry/sync.js';
import { RegistryRepo, rpsl } from '../../support/registry.js';
import { startApp } from '../../support/system.js';
import { FLEET_ASN, PLACES, PLACE_LINKS, raw, seedFleet, startControl, startSiteWith, type Control, type RunningSite } from './support.js';

const SITE_URL = 'https://dn42.example.net';
const PORTAL_URL = 'https://peer.example.net/portal';

const TYPES: Record<SitePath, RegExp> = {
  '/': /^text\/html; charset=utf-8$/,
  '/favicon.svg': /^image\/svg\+xml$/,
  '/fleet.js': /^text\/javascript; charset=utf-8$/,
  '/world-land.geojson': /^application\/geo\+json$/,
  '/canyonlands.jpg': /^image\/jpeg$/,
  '/robots.txt': /^text\/plain; charset=utf-8$/,
  '/sitemap.xml': /^application\/xml; charset=utf-8$/,
};
const PATHS = Object.keys(CACHE_CONTROL) as SitePath[];

/** The width and height of a baseline or progressive JPEG, from its SOF segment. */
function jpegSize(data: Buffer): { width: number; height: number } {
  let at = 2;
  while (at < data.length) {
    if (data[at] !== 0xff) throw new Error(`no marker at ${at}`);
    const marker = data[at + 1];
    const length = data.readUInt16BE(at + 2);
    if (marker >= 0xc0 && marker <= 0xc2) return { height: data.readUInt16BE(at + 5), width: data.readUInt16BE(at + 7) };
    at += 2 + length;
  }
  throw new Error('no SOF segment');
}

describe('home site', function () {
  this.timeout(120_000);
  let control: Control;
  let site: RunningSite;
  let cachedPage: string | undefined;
  const pageHtml = async () => (cachedPage ??= (await raw(site.url, '/')).body.toString('utf8'));

  before(async () => {
    control = await startControl();
    await seedFleet(control);
    site = await startSiteWith({ CONTROL_URL: control.url, SITE_URL, PORTAL_URL });
  });
  after(async () => {
    await site?.close();
    await control?.close();
  });

  describe('paths', () => {
    for (const path of PATHS) {
      const cacheControl = CACHE_CONTROL[path];
      it(`GET ${path} answers 200 with ${cacheControl ? `Cache-Control: ${cacheControl}` : 'no Cache-Control'}`, async () => {
        const res = await raw(site.url, path);
        expect(res.status).to.equal(200);
        expect(res.headers['cache-control']).to.equal(cacheControl);
        expect(res.headers['content-type']).to.match(TYPES[path]);
        expect(res.headers['x-content-type-options']).to.equal('nosniff');
        expect(Number(res.headers['content-length'])).to.equal(res.body.length).and.above(0);
      });

      it(`HEAD ${path} answers like GET without a body`, async () => {
        const get = await raw(site.url, path, { headers: { 'accept-encoding': 'gzip' } });
        const head = await raw(site.url, path, { method: 'HEAD', headers: { 'accept-encoding': 'gzip' } });
        expect(head.status).to.equal(200);
        expect(head.body.length).to.equal(0);
        for (const name of ['cache-control', 'content-type', 'content-length', 'content-encoding', 'etag', 'vary', 'content-security-policy']) {
          expect(head.headers[name], name).to.equal(get.headers[name]);
        }
      });
    }

    it('answers every other method with 405 and Allow: GET, HEAD, on every kind of path', async () => {
      for (const path of ['/', '/fleet.js', '/robots.txt', '/nodes/edge-fra-1', '/nope']) {
        for (const method of ['POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']) {
          const res = await raw(site.url, path, { method });
          expect(res.status, `${method} ${path}`).to.equal(405);
          expect(res.headers.allow).to.equal('GET, HEAD');
        }
      }
    });

    it('sends /nodes/* to the node page of the console: by default the control server /console/', async () => {
      const res = await raw(site.url, '/nodes/edge-fra-1');
      expect(res.status).to.equal(302);
      expect(res.headers.location).to.equal(`${control.url}/console/nodes/edge-fra-1`);
      expect(res.headers['cache-control']).to.equal(undefined);
      const head = await raw(site.url, '/nodes/edge-fra-1', { method: 'HEAD' });
      expect(head.status).to.equal(302);
      expect(head.headers.location).to.equal(res.headers.location);
    });

    it('keeps a /nodes/* target under the console: dot segments dropped, every segment encoded', async () => {
      expect((await raw(site.url, '/nodes/../../admin')).headers.location).to.equal(`${control.url}/console/nodes/admin`);
      expect((await raw(site.url, '/nodes/%2e%2e/%2E%2E/x')).headers.location).to.equal(`${control.url}/console/nodes/x`);
      expect((await raw(site.url, '/nodes/a%2Fb//c')).headers.location).to.equal(`${control.url}/console/nodes/a%2Fb/c`);
      expect((await raw(site.url, '/nodes/%zz')).headers.location).to.equal(`${control.url}/console/nodes/%25zz`);
      expect((await raw(site.url, '/nodes/')).headers.location).to.equal(`${control.url}/console/nodes/`);
    });

    it('sends /nodes/* to CONSOLE_URL when it is set', async () => {
      const other = await startSiteWith({ CONTROL_URL: control.url, CONSOLE_URL: 'https://ops.example.net/console' });
      try {
        expect((await raw(other.url, '/nodes/core-ams-1')).headers.location).to.equal('https://ops.example.net/console/nodes/core-ams-1');
      } finally {
        await other.close();
      }
    });

    it('sends anything else to / with 302 and no Cache-Control (paths are exact and case-sensitive)', async () => {
      for (const path of ['/nope', '/index.html', '/healthz', '/nodes', '/FLEET.JS', '/fleet.js/', '/canyonlands.jpeg', '/nope/deeper?x=1']) {
        const res = await raw(site.url, path);
        expect(res.status, path).to.equal(302);
        expect(res.headers.location, path).to.equal('/');
        expect(res.headers['cache-control'], path).to.equal(undefined);
      }
    });

    it('lets pages of any origin load the map component and the land, and nothing else', async () => {
      for (const path of PATHS) {
        const res = await raw(site.url, path, { headers: { origin: 'https://ops.example.net' } });
        expect(res.headers['access-control-allow-origin'], path).to.equal(['/fleet.js', '/world-land.geojson'].includes(path) ? '*' : undefined);
      }
    });

    it('answers 304 to a request that carries the ETag it has', async () => {
      const first = await raw(site.url, '/fleet.js');
      const again = await raw(site.url, '/fleet.js', { headers: { 'if-none-match': String(first.headers.etag) } });
      expect(again.status).to.equal(304);
      expect(again.body.length).to.equal(0);
      expect(again.headers['cache-control']).to.equal('max-age=300');
    });

    it('sends brotli or gzip as the request accepts, the same bytes once decoded, and says it varies', async () => {
      for (const path of ['/', '/fleet.js', '/world-land.geojson', '/favicon.svg', '/robots.txt', '/sitemap.xml'] as const) {
        const plain = await raw(site.url, path);
        const br = await raw(site.url, path, { headers: { 'accept-encoding': 'gzip, deflate, br' } });
        const gzip = await raw(site.url, path, { headers: { 'accept-encoding': 'gzip' } });
        const refused = await raw(site.url, path, { headers: { 'accept-encoding': 'br;q=0, gzip;q=0' } });
        expect(plain.headers['content-encoding'], path).to.equal(undefined);
        expect(br.headers['content-encoding'], path).to.equal('br');
        expect(gzip.headers['content-encoding'], path).to.equal('gzip');
        expect(refused.headers['content-encoding'], path).to.equal(undefined);
        expect(brotliDecompressSync(br.body).equals(plain.body), path).to.equal(true);
        expect(gunzipSync(gzip.body).equals(plain.body), path).to.equal(true);
        expect(plain.headers.vary, path).to.equal('Accept-Encoding');
      }
    });
  });

  describe('the files', () => {
    it('/canyonlands.jpg is a real JPEG photo, 1600 × 640', async () => {
      const { body } = await raw(site.url, '/canyonlands.jpg');
      expect([...body.subarray(0, 3)]).to.deep.equal([0xff, 0xd8, 0xff]);
      expect([...body.subarray(-2)]).to.deep.equal([0xff, 0xd9]);
      expect(jpegSize(body)).to.deep.equal({ width: 1600, height: 640 });
      expect(body.length).to.be.above(50_000);
    });

    it('/world-land.geojson is the Natural Earth land as GeoJSON polygons, rounded to 0.01°', async () => {
      const land = JSON.parse((await raw(site.url, '/world-land.geojson')).body.toString('utf8'));
      expect(land.type).to.equal('FeatureCollection');
      expect(land.features.length).to.be.above(0);
      const coordinates: number[] = JSON.stringify(land.features.map((f: { geometry: unknown }) => f.geometry))
        .match(/-?\d+(\.\d+)?/g)!
        .map(Number);
      expect(coordinates.length).to.be.above(5000);
      expect(coordinates.every((c) => Math.abs(c * 100 - Math.round(c * 100)) < 1e-6)).to.equal(true);
      expect(land.features.every((f: { geometry: { type: string } }) => ['Polygon', 'MultiPolygon'].includes(f.geometry.type))).to.equal(true);
    });

    it('/favicon.svg is an SVG image', async () => {
      expect((await raw(site.url, '/favicon.svg')).body.toString('utf8')).to.match(/^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"[^>]*>.*<\/svg>\s*$/s);
    });

    it('/robots.txt lets robots in, keeps them off /nodes/ and names the sitemap at SITE_URL', async () => {
      expect((await raw(site.url, '/robots.txt')).body.toString('utf8')).to.equal(
        `User-agent: *\nAllow: /\nDisallow: /nodes/\n\nSitemap: ${SITE_URL}/sitemap.xml\n`,
      );
    });

    it('/sitemap.xml has exactly one page entry: SITE_URL/', async () => {
      const xml = (await raw(site.url, '/sitemap.xml')).body.toString('utf8');
      expect(xml).to.match(/^<\?xml version="1.0" encoding="UTF-8"\?>\n<urlset xmlns="http:\/\/www\.sitemaps\.org\/schemas\/sitemap\/0\.9">/);
      expect(xml.match(/<url>/g)).to.have.length(1);
      expect(xml).to.include(`<loc>${SITE_URL}/</loc>`);
    });
  });

  describe('the page', () => {
    let html: string;
    before(async () => {
      html = await pageHtml();
    });

    it('carries the baked snapshot: AS number, figures, every place on the map and in the list, every link', () => {
      expect(html).to.include(`AS${FLEET_ASN}`);
      expect(html).to.match(/data-stat="nodes_online">5</);
      expect(html).to.match(/data-stat="bgp_sessions">9</);
      expect(html).to.match(/data-stat="routes">660</);
      expect(html).to.include('<time data-updated datetime="2026-11-01T12:00:00.000Z">2026-11-01 12:00 UTC</time>');
      const svg = html.slice(html.indexOf('<svg class="map-svg"'), html.indexOf('</svg>'));
      expect(svg).to.include('data-source="snapshot"');
      expect([...svg.matchAll(/<g class="place[^"]*" data-key="(\w+)"/g)].map((m) => m[1]).sort()).to.deep.equal(PLACES);
      expect([...svg.matchAll(/<path class="link[^"]*" data-a="(\w+)" data-b="(\w+)"/g)].map((m) => [m[1], m[2]])).to.deep.equal(PLACE_LINKS);
      expect(svg).to.match(/<path class="land" d="M[\d.,LMZ-]+/);
      expect(svg).to.include('data-key="SIN" transform');
      expect(svg).to.not.match(/class="place online" data-key="SIN"/);
      const list = html.slice(html.indexOf('<ul id="places"'), html.indexOf('</ul>'));
      for (const city of ['Amsterdam, Netherlands', 'Frankfurt, Germany', 'London, United Kingdom', 'New York, United States', 'Singapore, Singapore'])
        expect(list).to.include(city);
      expect(list).to.include('3 BGP sessions');
    });

    it('names nothing the public map hides: no node id, address or host name', () => {
      for (const secret of ['edge-fra-1', 'core-ams-1', '172.20.9.', 'fd42:4242:9', 'example.net:', 'nodes.example.net'])
        expect(html, secret).to.not.include(secret);
    });

    it('loads nothing from a third party: one script (/fleet.js), the icon and the photo, all same-origin; data from the control server', () => {
      const sources = [...html.matchAll(/\s(?:src|href)="([^"#][^"]*)"/g)].map((m) => m[1]);
      const scripts = [...html.matchAll(/<script\b[^>]*>/g)].map((m) => m[0]);
      expect(scripts).to.deep.equal(['<script type="module" src="/fleet.js">']);
      expect(html).to.include('url(/canyonlands.jpg)');
      for (const src of sources) expect(src, src).to.satisfy((s: string) => s.startsWith('/') || s === PORTAL_URL || s.startsWith(`${control.url}/`));
      expect(html).to.include(`fleet-src="${control.url}/control/v1/public/fleet"`);
      expect(html).to.include(`data-control="${control.url}"`);
    });

    it('has a Content-Security-Policy that allows its own inline style by hash, its script and the control server, and nothing else', async () => {
      const res = await raw(site.url, '/');
      const style = html.slice(html.indexOf('<style>') + 7, html.indexOf('</style>'));
      const hash = createHash('sha256').update(style).digest('base64');
      expect(res.headers['content-security-policy']).to.equal(
        `default-src 'none'; script-src 'self'; style-src 'sha256-${hash}'; img-src 'self'; connect-src 'self' ${control.url}; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`,
      );
      expect(res.headers['x-frame-options']).to.equal('DENY');
    });

    it('links to the peering portal when PORTAL_URL is set, and says it is not open yet when it is not', async () => {
      expect(html).to.include(`<a class="cta" href="${PORTAL_URL}">Open the peering portal</a>`);
      const without = await startSiteWith({ CONTROL_URL: control.url });
      try {
        const page = (await raw(without.url, '/')).body.toString('utf8');
        expect(page).to.not.include('Open the peering portal');
        expect(page).to.include('Our peering portal is not open yet');
      } finally {
        await without.close();
      }
    });

    it('stays under the budget: the page with its script, land and icon weigh under 300 KB compressed (the photo aside)', async () => {
      const sizes: Record<string, number> = {};
      for (const path of ['/', '/fleet.js', '/world-land.geojson', '/favicon.svg']) {
        sizes[path] = (await raw(site.url, path, { headers: { 'accept-encoding': 'gzip' } })).body.length;
      }
      const total = Object.values(sizes).reduce((a, b) => a + b, 0);
      console.log(
        `      page weight, gzip: ${Object.entries(sizes)
          .map(([p, b]) => `${p} ${(b / 1024).toFixed(1)} KiB`)
          .join(', ')}; total ${(total / 1024).toFixed(1)} KiB`,
      );
      expect(total).to.be.below(300 * 1024);
    });
  });

  describe('the AS name', () => {
    it('comes from the registry replica for the AS number of the map', async () => {
      const repo = new RegistryRepo();
      repo
        .put(
          'aut-num',
          `AS${FLEET_ASN}`,
          rpsl([
            ['aut-num', `AS${FLEET_ASN}`],
            ['as-name', 'CANYON-<AS>'],
            ['mnt-by', 'CANYON-MNT'],
            ['source', 'DN42'],
          ]),
        )
        .commit('canyon');
      const token = 'site-spec-registry-token-0123456789';
      const config = loadConfig({
        DATABASE_URL: control.sys.db.url,
        LOG_LEVEL: 'silent',
        REGISTRY_SERVICE_TOKEN: token,
        REGISTRY_SOURCE: repo.dir,
        DATA_DIR: site.dataDir,
      });
      await migrate(control.sys.pool, [registryMigrations]);
      await new RegistrySyncer({ ...control.sys.context, config }).sync({ metadata: { actor: 'site-spec' } });
      const replica = await startApp(createRegistryApp({ ...control.sys.context, config }));
      const named = await startSiteWith({ CONTROL_URL: control.url, REGISTRY_URL: replica.url, REGISTRY_SERVICE_TOKEN: token });
      try {
        const page = (await raw(named.url, '/')).body.toString('utf8');
        expect(page).to.include('<h1>CANYON-&lt;AS&gt;</h1>');
        expect(page).to.include(`<title>CANYON-&lt;AS&gt; · dn42 network</title>`);
        expect(page).to.include(`<span data-asn>AS${FLEET_ASN}</span>`);
      } finally {
        await named.close();
        await replica.close();
        repo.destroy();
      }
    });

    it('is the AS number when no replica is configured', async () => {
      expect(await pageHtml()).to.include(`<h1>AS${FLEET_ASN}</h1>`);
    });
  });

  describe('the snapshot', () => {
    it('is kept in DATA_DIR when the control server gives one', async () => {
      expect(await readSavedSnapshot(site.dataDir)).to.deep.equal(site.site.snapshot);
      expect(site.site.snapshot?.nodes.map((n) => n.label)).to.deep.equal(PLACES);
    });

    it('stays on the page when a later bake gets no map (control server down), and the kept one is used by a site started then', async () => {
      const control2 = await startControl();
      await seedFleet(control2);
      const running = await startSiteWith({ CONTROL_URL: control2.url });
      try {
        const before = (await raw(running.url, '/')).body.toString('utf8');
        await control2.stopHttp();
        expect(await running.site.bake()).to.equal(false);
        const after = (await raw(running.url, '/')).body.toString('utf8');
        expect(after).to.equal(before);
        // A new site on the same data directory, the control server still down: the kept snapshot.
        const restarted = await startSiteWith({ CONTROL_URL: control2.url }, { dataDir: running.dataDir });
        try {
          const page = (await raw(restarted.url, '/')).body.toString('utf8');
          expect(page).to.include('data-key="FRA"');
          expect(page).to.match(/data-stat="routes">660</);
        } finally {
          await restarted.close();
        }
      } finally {
        await running.close();
        await control2.close();
      }
    });

    it('without any snapshot, the page still answers 200 with an empty map and the world drawn', async () => {
      const lonely = await startSiteWith({ CONTROL_URL: 'http://127.0.0.1:1' });
      try {
        expect(lonely.site.snapshot).to.equal(null);
        const res = await raw(lonely.url, '/');
        expect(res.status).to.equal(200);
        const page = res.body.toString('utf8');
        expect(page).to.include('data-places="0"');
        expect(page).to.match(/<path class="land" d="M/);
        expect(page).to.include('Our points of presence are listed here as they come online.');
        expect(page).to.match(/data-stat="nodes_online">–</);
        expect(page).to.include('<p class="asof" hidden>');
      } finally {
        await lonely.close();
      }
    });

    it('ignores a kept snapshot that is not a public map', async () => {
      const running = await startSiteWith({ CONTROL_URL: 'http://127.0.0.1:1' });
      try {
        await saveSnapshot(running.dataDir, { nodes: 'no' } as never);
        expect(await readSavedSnapshot(running.dataDir)).to.equal(null);
      } finally {
        await running.close();
      }
    });
  });
});
