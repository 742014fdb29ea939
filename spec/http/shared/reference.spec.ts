import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'chai';
import { createServiceApp, finishServiceApp } from '../../../http/shared/app.js';
import { REFERENCE_NOT_BUILT, referenceRoutes } from '../../../http/shared/reference.js';
import { buildReference, type Built } from '../../../web/build.js';
import { createLogger } from '../../../infra/logger.js';
import { api } from '../../support/http.js';
import { startApp } from '../../support/system.js';

const PREFIX = '/control/v1';

async function serve(dir?: string) {
  const log = createLogger('silent');
  const app = createServiceApp('control', log);
  app.use(referenceRoutes(PREFIX, dir));
  return startApp(finishServiceApp(app, 'control', log));
}

describe('API reference page (HTTP)', function () {
  this.timeout(60_000);
  let built: Built;
  before(async () => {
    built = await buildReference();
  });

  it('builds one hashed script, one hashed style sheet and the licence notices, all referred to relatively, with no CDN address left', async () => {
    const names = built.files.map((f) => f.name).sort();
    expect(names).to.have.length(4);
    expect(names[0]).to.equal('assets/LICENSES.txt');
    expect(names[1]).to.match(/^assets\/reference-[A-Z0-9]+\.js$/);
    expect(names[2]).to.match(/^assets\/style-[A-Z0-9]+\.css$/);
    expect(names[3]).to.equal('index.html');
    const script = await readFile(join(built.dir, names[1]), 'utf8');
    expect(script).not.to.include('cdn.redoc.ly');
    expect(await readdir(join(built.dir, 'assets'))).to.have.length(3);
  });

  it('serves the page with a same-origin CSP and its assets by hashed name, cached for a year; /docs/ goes to /docs', async () => {
    const server = await serve();
    try {
      const client = api(server.url);
      const page = await client.get(`${PREFIX}/docs`);
      expect(page.status).to.equal(200);
      expect(page.headers.get('content-type')).to.equal('text/html; charset=utf-8');
      const csp = page.headers.get('content-security-policy')!;
      for (const directive of [
        "default-src 'none'",
        "script-src 'self'",
        "connect-src 'self'",
        "img-src 'self' data:",
        "worker-src 'self' blob:",
        "frame-ancestors 'none'",
      ])
        expect(csp).to.include(directive);
      expect(csp).not.to.match(/https?:/);
      expect(page.headers.get('x-frame-options')).to.equal('DENY');
      expect(page.headers.get('x-content-type-options')).to.equal('nosniff');
      const assets = [...page.text.matchAll(/(?:src|href)="(docs\/[^"]+)"/g)].map((m) => m[1]);
      expect(assets).to.have.length(2);
      for (const asset of assets) {
        const res = await client.get(`${PREFIX}/${asset}`);
        expect(res.status, asset).to.equal(200);
        expect(res.headers.get('cache-control')).to.equal('public, max-age=31536000, immutable');
      }
      const slash = await client.get(`${PREFIX}/docs/`);
      expect(slash.status).to.equal(301);
      expect(slash.headers.get('location')).to.equal(`${PREFIX}/docs`);
      expect((await client.get(`${PREFIX}/docs/nothing.js`)).status).to.equal(404);
    } finally {
      await server.close();
    }
  });

  it('answers 503 naming the build command when the page is not built', async () => {
    const server = await serve('/nonexistent/api-reference');
    try {
      const res = await api(server.url).get(`${PREFIX}/docs`);
      expect(res.status).to.equal(503);
      expect(res.body).to.deep.equal({ detail: REFERENCE_NOT_BUILT });
    } finally {
      await server.close();
    }
  });
});
