import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { createServiceApp } from '../../../http/shared/app.js';
import { finishIdentityApp } from '../../../http/identity/errors.js';
import { PAGE_NOT_BUILT, pageHeaders, pageRoutes } from '../../../http/identity/page.js';
import { buildPage, type Built } from '../../../web/build.js';
import { loadConfig } from '../../../infra/config.js';
import { createLogger } from '../../../infra/logger.js';
import { api, expectResponse } from '../../support/http.js';
import { listenOn, startIdentity, type IdentityFixture } from '../../support/identity.js';
import { freePort } from '../../support/ports.js';

describe('Identity GET /authorize (the authorization page)', function () {
  this.timeout(60_000);
  let f: IdentityFixture;
  let built: Built;

  before(async () => {
    built = await buildPage();
    f = await startIdentity();
  });
  after(() => f?.close());

  it('serves the built index.html, never cached, under a same-origin CSP without framing or referrer', async () => {
    const res = await f.client.get('/authorize?client_id=x&state=y');
    expectResponse(res).status(200);
    expect(res.headers.get('content-type')).to.equal('text/html; charset=utf-8');
    expect(res.headers.get('cache-control')).to.equal('no-store');
    const csp = res.headers.get('content-security-policy')!;
    for (const directive of [
      "default-src 'self'",
      "script-src 'self'",
      "connect-src 'self'",
      "frame-ancestors 'none'",
      "base-uri 'none'",
      "object-src 'none'",
      "form-action 'none'",
    ]) {
      expect(csp.split('; '), directive).to.include(directive);
    }
    expect(res.headers.get('x-frame-options')).to.equal('DENY');
    expect(res.headers.get('referrer-policy')).to.equal('no-referrer');
    expect(res.headers.get('x-content-type-options')).to.equal('nosniff');
    expect(res.text).to.match(/<script type="module" src="authorize-page\/app-[\w]+\.js"><\/script>/);
    expect(res.text, 'no inline script or style').not.to.match(/<script>|<style|style="/);
    expect(res.text).not.to.include('app.ts');
  });

  it('serves the hashed assets the page references, relatively, cacheable for a year', async () => {
    const html = (await f.client.get('/authorize')).text;
    const refs = [...html.matchAll(/(?:src|href)="(authorize-page\/[^"]+)"/g)].map((m) => m[1]);
    expect(refs).to.have.length(2);
    expect(built.files.map((b) => b.name).sort()).to.deep.equal(['index.html', ...refs.map((r) => r.replace('authorize-page/', 'assets/'))].sort());
    for (const ref of refs) {
      const res = await f.client.get(`/${ref}`);
      expectResponse(res).status(200);
      expect(res.headers.get('content-type')).to.match(ref.endsWith('.js') ? /^text\/javascript|^application\/javascript/ : /^text\/css/);
      expect(res.headers.get('cache-control')).to.equal('public, max-age=31536000, immutable');
      expect(res.headers.get('x-content-type-options')).to.equal('nosniff');
    }
  });

  it('answers the JSON 404 for /authorize/ and for an asset that is not there', async () => {
    expectResponse(await f.client.get('/authorize/')).status(404);
    expectResponse(await f.client.get('/authorize-page/app-NOPE.js')).status(404);
    expectResponse(await f.client.get('/authorize-page/')).status(404);
  });

  it('answers HEAD like GET, without a body', async () => {
    const res = await f.client.send('HEAD', '/authorize');
    expectResponse(res).status(200);
    expect(res.text).to.equal('');
    expect(res.headers.get('cache-control')).to.equal('no-store');
  });

  it('answers 503 naming the build step when the page is not built', async () => {
    const config = loadConfig({});
    const app = createServiceApp('identity', createLogger('silent'));
    app.use(pageRoutes(config, '/nonexistent/authorize-page'));
    const server = await listenOn(finishIdentityApp(app, createLogger('silent')), await freePort());
    try {
      const res = await api(server.url).get('/authorize');
      expectResponse(res).status(503).body({ detail: PAGE_NOT_BUILT, error: 'temporarily_unavailable', fatal: false });
    } finally {
      await server.close();
    }
  });

  it('builds side by side with other builds into the same directory, leaving one whole build and nothing beside it', async () => {
    const parent = mkdtempSync(join(tmpdir(), 'dn42-page-build-'));
    try {
      const dir = join(parent, 'authorize-page');
      const builds = await Promise.all([buildPage(dir), buildPage(dir), buildPage(dir)]);
      expect(readdirSync(parent)).to.deep.equal(['authorize-page']);
      const html = readFileSync(join(dir, 'index.html'), 'utf8');
      for (const name of builds[0].files.map((f) => f.name)) expect(existsSync(join(dir, name)), name).to.equal(true);
      expect(html).to.include(`authorize-page/${builds[0].files.find((f) => f.name.endsWith('.js'))!.name.replace('assets/', '')}`);
    } finally {
      rmSync(parent, { recursive: true, force: true });
    }
  });

  it('lets only a configured external captcha widget origin load its script and frame', () => {
    const external = pageHeaders({ captchaKind: 'external', captchaWidgetUrl: 'https://widget.example/v0/api.js?sitekey=k' })['Content-Security-Policy'].split(
      '; ',
    );
    expect(external).to.include.members([
      "script-src 'self' https://widget.example",
      'frame-src https://widget.example',
      "connect-src 'self' https://widget.example",
    ]);
    const pow = pageHeaders({ captchaKind: 'pow', captchaWidgetUrl: 'https://widget.example/v0/api.js' })['Content-Security-Policy'].split('; ');
    expect(pow).to.include.members(["script-src 'self'", "frame-src 'none'"]);
  });
});
