import { expect } from 'chai';
import { createControlApp } from '../../../../http/control/app.js';
import { createTestSystem, startApp, type TestSystem } from '../../../support/system.js';

const ORIGIN = 'https://dn42.example.net';

describe('control: cross-origin reads of /public/*', function () {
  this.timeout(30_000);
  let sys: TestSystem;
  let url: string;
  let close: () => Promise<void>;

  before(async () => {
    sys = await createTestSystem();
    const started = await startApp(createControlApp(sys.context));
    url = `${started.url}/control/v1`;
    close = started.close;
  });
  after(async () => {
    await close?.();
    await sys?.close();
  });

  for (const path of ['/public/map', '/public/fleet']) {
    it(`GET ${path} from another origin may be read by any origin, without credentials`, async () => {
      const res = await fetch(`${url}${path}`, { headers: { origin: ORIGIN } });
      expect(res.status).to.equal(200);
      expect(res.headers.get('access-control-allow-origin')).to.equal('*');
      expect(res.headers.get('access-control-allow-credentials')).to.equal(null);
    });

    it(`a preflight of ${path} gets 204 with GET and HEAD for a day`, async () => {
      const res = await fetch(`${url}${path}`, {
        method: 'OPTIONS',
        headers: { origin: ORIGIN, 'access-control-request-method': 'GET', 'access-control-request-headers': 'if-none-match' },
      });
      expect(res.status).to.equal(204);
      expect(res.headers.get('access-control-allow-origin')).to.equal('*');
      expect(res.headers.get('access-control-allow-methods')).to.equal('GET, HEAD');
      expect(res.headers.get('access-control-allow-headers')).to.equal('if-none-match');
      expect(res.headers.get('access-control-max-age')).to.equal('86400');
    });
  }

  it('leaves every other route without CORS headers', async () => {
    for (const path of ['/healthz', '/admin/nodes']) {
      const res = await fetch(`${url}${path}`, { headers: { origin: ORIGIN } });
      expect(res.headers.get('access-control-allow-origin'), path).to.equal(null);
    }
  });
});
