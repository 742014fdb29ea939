import { expect } from 'chai';
import type { Fetch } from '../../web/authorize/api.js';
import { captchaSource, powSource, PREPARED_TICKET_MAX_AGE_MS } from '../../web/authorize/captcha.js';
import { expectResponse } from '../support/http.js';
import { eventually } from '../support/wait.js';
import { GAMMA_ASN, startVerification, type VerificationFixture } from '../http/identity/verification-support.js';

/**
 * The page's proof-of-work solver (altcha-lib with WebCrypto SHA-256, as the
 * browser runs it) against the running service: its tickets must be what the
 * server's verifier accepts, once.
 */
describe('Authorization page: proof-of-work captcha against the service', function () {
  this.timeout(120_000);
  let f: VerificationFixture;
  let puzzles: number;
  let fetchFn: Fetch;

  before(async () => {
    f = await startVerification();
    fetchFn = (path, init) => {
      if (path.includes('/captcha/challenge')) puzzles += 1;
      return fetch(new URL(path, f.url), init);
    };
  });
  beforeEach(() => {
    puzzles = 0;
  });
  after(() => f?.done());

  it('solves the puzzle of the endpoint into tickets the verification options accept once each, a fresh one per call', async () => {
    const source = powSource('/api/v1/captcha/challenge', fetchFn);
    source.prepare();
    const first = await source.ticket();
    expect(first).to.have.property('ticket');
    expect(puzzles, 'prepare and ticket share one puzzle').to.equal(1);
    const ticket = (first as { ticket: string }).ticket;
    expectResponse(await f.client.post('/api/v1/verification-options', { asn: GAMMA_ASN, captcha_token: ticket })).status(200);
    expectResponse(await f.client.post('/api/v1/verification-options', { asn: GAMMA_ASN, captcha_token: ticket }))
      .status(400)
      .detail('captcha verification failed');
    const second = (await source.ticket()) as { ticket: string };
    expect(second.ticket).to.be.a('string').and.not.equal(ticket);
    expect(puzzles).to.equal(2);
    expectResponse(await f.client.post('/api/v1/verification-options', { asn: GAMMA_ASN, captcha_token: second.ticket })).status(200);
  });

  it('throws away a prepared ticket fetched more than 5 minutes ago and solves another', async () => {
    let clock = 0;
    const source = powSource('/api/v1/captcha/challenge', fetchFn, () => clock);
    source.prepare();
    clock = PREPARED_TICKET_MAX_AGE_MS + 1;
    const outcome = await source.ticket();
    expect(outcome).to.have.property('ticket');
    expect(puzzles).to.equal(2);
  });

  it('does not hand out a prepared failure: it asks again when the ticket is wanted', async () => {
    let down = true;
    const calls: boolean[] = [];
    const flaky: Fetch = (path, init) => (calls.push(down), down ? Promise.reject(new TypeError('offline')) : fetchFn(path, init));
    const source = powSource('/api/v1/captcha/challenge', flaky);
    source.prepare();
    await eventually(() => calls.length === 1, { what: 'the prepared request, sent while offline' });
    down = false;
    expect(await source.ticket()).to.have.property('ticket');
    expect(calls, 'offline (prepared), then online (asked again)').to.deep.equal([true, false]);
  });

  it('reports the answer of a puzzle endpoint that refuses, and status 0 when nothing answers', async () => {
    const refused = await powSource('/api/v1/captcha/nowhere', fetchFn).ticket();
    expect(refused).to.have.nested.property('failure.status', 404);
    const unreachable = await powSource('http://127.0.0.1:9/puzzle', (path, init) => fetch(path, init)).ticket();
    expect(unreachable).to.deep.equal({ failure: { status: 0, body: null } });
  });

  it('sends no ticket for the captcha kind none', async () => {
    const source = captchaSource({ kind: 'none', endpoint: null }, { fetch: fetchFn, widgetSlot: () => undefined as never, loadScript: async () => undefined });
    expect(await source.ticket()).to.deep.equal({ ticket: '' });
    expect(puzzles).to.equal(0);
  });
});
