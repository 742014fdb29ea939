import { mkdir } from 'node:fs/promises';
import { expect } from 'chai';
import type { Browser, BrowserContextOptions, Page } from 'playwright-core';
import {
  ADMIN_TOKEN,
  FLEET_ASN,
  NODES,
  PLACES,
  PLACE_LINKS,
  seedFleet,
  startControl,
  startSiteWith,
  type Control,
  type RunningSite,
} from '../http/site/support.js';
import { launchChromium, skipWithoutChromium } from './authorize-support.js';

/** Screenshots the suite takes (gitignored): look at them after a change to the page. */
const SHOTS = '.data/screenshots';
const PORTAL_URL = 'https://peer.example.net/';
const DESKTOP = { width: 1280, height: 900 };
const PHONE: BrowserContextOptions = { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true, deviceScaleFactor: 2 };

/** What the map and the list show, read from the page. */
async function drawn(page: Page) {
  return page.evaluate(() => {
    const svg = document.querySelector('fleet-map svg.map-svg')!;
    return {
      layer: document.getElementById('network')!.dataset.layer,
      source: svg.getAttribute('data-source'),
      places: [...svg.querySelectorAll('g.place')].map((g) => g.getAttribute('data-key')).sort(),
      online: [...svg.querySelectorAll('g.place.online')].map((g) => g.getAttribute('data-key')).sort(),
      links: [...svg.querySelectorAll('path.link')]
        .filter((p) => (p.getAttribute('d') ?? '').length > 10)
        .map((p) => [p.getAttribute('data-a'), p.getAttribute('data-b')]),
      land: (svg.querySelector('path.land')?.getAttribute('d') ?? '').length,
      list: [...document.querySelectorAll('#places li')].map((li) => li.getAttribute('data-key')).sort(),
      nodeLinks: [...document.querySelectorAll('#places a')].map((a) => a.getAttribute('href')).sort(),
      figures: [...document.querySelectorAll('[data-stat]')].map((d) => d.textContent),
    };
  });
}

const BROWSER_ARGS = ['--disable-gpu', '--disable-background-networking', '--disable-component-update'];

describe('home site in Chromium', function () {
  this.timeout(120_000);
  let control: Control;
  let site: RunningSite;
  let browser: Browser;

  before(async function () {
    skipWithoutChromium(this);
    await mkdir(SHOTS, { recursive: true });
    control = await startControl();
    await seedFleet(control);
    site = await startSiteWith({ CONTROL_URL: control.url, PORTAL_URL });
    browser = await launchChromium(BROWSER_ARGS);
  });
  after(async () => {
    await browser?.close();
    await site?.close();
    await control?.close();
  });

  async function open(options: BrowserContextOptions = { viewport: DESKTOP }): Promise<Page> {
    const context = await browser.newContext(options);
    return context.newPage();
  }

  describe('with the control server answering', () => {
    it('draws every place and link of the seeded fleet through the map component, and lists the places with their nodes', async () => {
      const page = await open();
      const requests: string[] = [];
      page.on('request', (r) => requests.push(r.url()));
      try {
        await page.goto(`${site.url}/`);
        await page.waitForSelector('#network[data-layer="fleet"]');
        const seen = await drawn(page);
        expect(seen.source).to.equal('fleet');
        expect(seen.places).to.deep.equal(PLACES);
        expect(seen.online).to.deep.equal(['AMS', 'FRA', 'LON', 'NYC']);
        expect(seen.links).to.deep.equal(PLACE_LINKS);
        expect(seen.land).to.be.above(1000);
        expect(seen.list).to.deep.equal(PLACES);
        expect(seen.nodeLinks).to.deep.equal(NODES.map((n) => `/nodes/${n.id}`).sort());
        expect(seen.figures).to.deep.equal(['5', '9', '660']);
        // Every marker is inside the map.
        const outside = await page.evaluate(() => {
          const box = document.querySelector('fleet-map svg')!.getBoundingClientRect();
          return [...document.querySelectorAll('fleet-map g.place .dot')].filter((d) => {
            const r = d.getBoundingClientRect();
            return r.left < box.left || r.right > box.right || r.top < box.top || r.bottom > box.bottom;
          }).length;
        });
        expect(outside).to.equal(0);
        await page.screenshot({ path: `${SHOTS}/site-desktop.png`, fullPage: true });
        for (const url of requests)
          expect(url, url).to.satisfy((u: string) => u.startsWith(`${site.url}/`) || u.startsWith(`${control.url}/control/v1/public/`));
        expect(
          requests
            .filter((u) => u.includes('/control/v1/public/'))
            .map((u) => new URL(u).pathname)
            .sort(),
        ).to.deep.equal(['/control/v1/public/fleet', '/control/v1/public/map']);
      } finally {
        await page.context().close();
      }
    });

    it('stays readable on a phone: no sideways scroll, markers at least 9 px, the map labels left to the list', async () => {
      const page = await open(PHONE);
      try {
        await page.goto(`${site.url}/`);
        await page.waitForSelector('#network[data-layer="fleet"]');
        const layout = await page.evaluate(() => ({
          scrollWidth: document.scrollingElement!.scrollWidth,
          width: window.innerWidth,
          dot: Math.min(...[...document.querySelectorAll('fleet-map g.place .dot')].map((d) => d.getBoundingClientRect().width)),
          labels: getComputedStyle(document.querySelector('fleet-map .labels')!).display,
          listFont: parseFloat(getComputedStyle(document.querySelector('#places li')!).fontSize),
        }));
        expect(layout.scrollWidth).to.be.at.most(layout.width);
        expect(layout.dot).to.be.at.least(9);
        expect(layout.labels).to.equal('none');
        expect(layout.listFont).to.be.at.least(16);
        await page.screenshot({ path: `${SHOTS}/site-phone.png`, fullPage: true });
        await page.locator('fleet-map').screenshot({ path: `${SHOTS}/site-phone-map.png` });
      } finally {
        await page.context().close();
      }
    });

    it('follows dark mode', async () => {
      const light = await open({ viewport: DESKTOP, colorScheme: 'light' });
      const dark = await open({ viewport: DESKTOP, colorScheme: 'dark' });
      try {
        const colours: string[] = [];
        for (const page of [light, dark]) {
          await page.goto(`${site.url}/`);
          await page.waitForSelector('#network[data-layer="fleet"]');
          colours.push(
            await page.evaluate(
              () => getComputedStyle(document.body).backgroundColor + ' ' + getComputedStyle(document.querySelector('fleet-map .land')!).fill,
            ),
          );
        }
        expect(colours[0]).to.equal('rgb(250, 247, 242) rgb(243, 236, 224)');
        expect(colours[1]).to.equal('rgb(20, 23, 31) rgb(42, 49, 64)');
        await dark.screenshot({ path: `${SHOTS}/site-desktop-dark.png`, fullPage: true });
      } finally {
        await light.context().close();
        await dark.context().close();
      }
    });

    it('pulses the online markers, except for a visitor who asks for reduced motion', async () => {
      const moving = await open({ viewport: DESKTOP, reducedMotion: 'no-preference' });
      const still = await open({ viewport: DESKTOP, reducedMotion: 'reduce' });
      try {
        const names: string[] = [];
        for (const page of [moving, still]) {
          await page.goto(`${site.url}/`);
          await page.waitForSelector('#network[data-layer="fleet"]');
          names.push(
            await page.evaluate(
              () =>
                getComputedStyle(document.querySelector('fleet-map g.place.online .halo')!).animationName +
                ' ' +
                getComputedStyle(document.querySelector('fleet-map svg')!).animationName,
            ),
          );
        }
        expect(names).to.deep.equal(['pulse appear', 'none none']);
      } finally {
        await moving.context().close();
        await still.context().close();
      }
    });

    it('is usable by keyboard: the first Tab reaches a visible skip link, which leads to the content', async () => {
      const page = await open();
      try {
        await page.goto(`${site.url}/`);
        await page.keyboard.press('Tab');
        const skip = await page.evaluate(() => ({ text: document.activeElement?.textContent, top: document.activeElement!.getBoundingClientRect().top }));
        expect(skip.text).to.equal('Skip to content');
        expect(skip.top).to.be.at.least(0);
        await page.keyboard.press('Enter');
        expect(await page.evaluate(() => location.hash)).to.equal('#main');
        await page.keyboard.press('Tab');
        expect(await page.evaluate(() => document.activeElement?.textContent))
          .to.be.a('string')
          .and.not.equal('Skip to content');
        // The map is one image with a summary; its text alternative is the list.
        const map = await page.evaluate(() => {
          const svg = document.querySelector('fleet-map svg')!;
          return { role: svg.getAttribute('role'), label: svg.getAttribute('aria-label'), list: document.getElementById('places')!.getAttribute('aria-label') };
        });
        expect(map.role).to.equal('img');
        expect(map.label).to.match(/^World map of our 5 points of presence \(4 online\) and the 4 links between them/);
        expect(map.list).to.equal('Our points of presence');
      } finally {
        await page.context().close();
      }
    });
  });

  describe('refreshing', () => {
    it('redraws the map when /public/fleet brings a change, and leaves the drawing alone when nothing changed', async () => {
      const own = await startControl();
      await seedFleet(own);
      const ownSite = await startSiteWith({ CONTROL_URL: own.url });
      const page = await open();
      try {
        await page.goto(`${ownSite.url}/`);
        await page.waitForSelector('#network[data-layer="fleet"]');
        const refresh = () =>
          page.evaluate(async () => {
            const map = document.querySelector('fleet-map') as HTMLElement & { refresh(src: string): Promise<boolean> };
            return map.refresh(map.getAttribute('fleet-src')!);
          });
        await page.evaluate(() => ((document.querySelector('fleet-map svg') as SVGElement).dataset.mark = 'first drawing'));
        expect(await refresh()).to.equal(true);
        expect(await page.evaluate(() => (document.querySelector('fleet-map svg') as SVGElement).dataset.mark)).to.equal('first drawing');
        // A new point of presence, seen once the public fleet's 60 s cache has passed.
        const admin = { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' };
        const created = await fetch(`${own.url}/control/v1/admin/nodes`, {
          method: 'POST',
          headers: admin,
          body: JSON.stringify({
            node_id: 'edge-tyo-1',
            asn: FLEET_ASN,
            router_id: '172.20.9.50',
            site: 'tyo1',
            loopback_ipv4: '172.20.9.50',
            loopback_ipv6: 'fd42:4242:9::50',
            link_local: 'fe80::50',
            ipv4_prefixes: ['172.20.9.0/27'],
            ipv6_prefixes: ['fd42:4242:9::/48'],
          }),
        });
        expect(created.status).to.equal(201);
        own.sys.clock.advance(61_000);
        expect(await refresh()).to.equal(true);
        const seen = await drawn(page);
        expect(seen.places).to.deep.equal([...PLACES, 'TYO'].sort());
        expect(seen.list).to.deep.equal([...PLACES, 'TYO'].sort());
        expect(await page.evaluate(() => (document.querySelector('fleet-map svg') as SVGElement).dataset.mark)).to.equal(undefined);
      } finally {
        await page.context().close();
        await ownSite.close();
        await own.close();
      }
    });
  });

  describe('when a layer fails', () => {
    it('draws the fleet with the map component while /public/map fails, keeping the baked figures', async () => {
      const page = await open();
      try {
        await page.route('**/control/v1/public/map', (route) =>
          route.fulfill({ status: 503, contentType: 'application/json', body: '{"detail":"unavailable"}' }),
        );
        const refused = page.waitForResponse((r) => r.url().endsWith('/control/v1/public/map'));
        await page.goto(`${site.url}/`);
        expect((await refused).status()).to.equal(503);
        await page.waitForSelector('#network[data-layer="fleet"]');
        const seen = await drawn(page);
        expect(seen.places).to.deep.equal(PLACES);
        expect(seen.links).to.deep.equal(PLACE_LINKS);
        expect(seen.nodeLinks).to.have.length(NODES.length);
        expect(seen.figures).to.deep.equal(['5', '9', '660']);
        expect(await page.locator('body').innerText()).to.not.match(/error|fail|unavailable|503/i);
      } finally {
        await page.context().close();
      }
    });

    it('draws the refresh from /public/map while /public/fleet fails', async () => {
      const page = await open();
      try {
        await page.route('**/control/v1/public/fleet', (route) => route.abort('connectionrefused'));
        const failed = page.waitForEvent('requestfailed', (r) => r.url().endsWith('/control/v1/public/fleet'));
        await page.goto(`${site.url}/`);
        await failed;
        await page.waitForSelector('#network[data-layer="map"]');
        const seen = await drawn(page);
        expect(seen.source).to.equal('map');
        expect(seen.places).to.deep.equal(PLACES);
        expect(seen.links).to.deep.equal(PLACE_LINKS);
        expect(seen.nodeLinks).to.deep.equal([]);
        expect(await page.locator('#places li[data-key="FRA"]').innerText()).to.include('3 BGP sessions');
      } finally {
        await page.context().close();
      }
    });

    it('shows the baked snapshot with the control server stopped, saying nothing alarming', async () => {
      const down = await startControl();
      await seedFleet(down);
      const lonely = await startSiteWith({ CONTROL_URL: down.url });
      await down.stopHttp();
      const page = await open();
      try {
        const failures = ['/control/v1/public/map', '/control/v1/public/fleet'].map((path) =>
          page.waitForEvent('requestfailed', (r) => r.url().endsWith(path)),
        );
        await page.goto(`${lonely.url}/`);
        await Promise.all(failures);
        // Both layers have failed: nothing is left that could draw.
        const seen = await drawn(page);
        expect(seen.layer).to.equal('snapshot');
        expect(seen.source).to.equal('snapshot');
        expect(seen.places).to.deep.equal(PLACES);
        expect(seen.links).to.deep.equal(PLACE_LINKS);
        expect(seen.list).to.deep.equal(PLACES);
        expect(seen.figures).to.deep.equal(['5', '9', '660']);
        expect(await page.locator('body').innerText()).to.not.match(/error|fail|unavailable|offline server|down/i);
        await page.screenshot({ path: `${SHOTS}/site-control-down.png`, fullPage: true });
      } finally {
        await page.context().close();
        await lonely.close();
        await down.close();
      }
    });

    it('works with JavaScript disabled: the snapshot is readable as HTML', async () => {
      const page = await open({ viewport: DESKTOP, javaScriptEnabled: false });
      try {
        await page.goto(`${site.url}/`);
        const seen = await drawn(page);
        expect(seen.layer).to.equal('snapshot');
        expect(seen.places).to.deep.equal(PLACES);
        expect(seen.links).to.deep.equal(PLACE_LINKS);
        expect(seen.figures).to.deep.equal(['5', '9', '660']);
        const text = await page.locator('main').innerText();
        for (const words of ['Nodes online', 'Amsterdam, Netherlands', 'Singapore, Singapore', 'Peer with us', 'Open the peering portal'])
          expect(text).to.include(words);
        expect(await page.locator('fleet-map svg').isVisible()).to.equal(true);
        await page.screenshot({ path: `${SHOTS}/site-nojs.png`, fullPage: true });
      } finally {
        await page.context().close();
      }
    });
  });
});
