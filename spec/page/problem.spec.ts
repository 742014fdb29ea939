import { expect } from 'chai';
import { call } from '../../web/authorize/api.js';
import { classifyContext } from '../../web/authorize/context.js';
import { NETWORK_FAILURE, problemOf } from '../../web/authorize/problem.js';

describe('Authorization page: answers and errors', () => {
  describe('problemOf', () => {
    it('shows the contract detail and code, fatal only when the body says so', () => {
      expect(problemOf({ status: 400, body: { detail: 'captcha verification failed', error: 'captcha_failed', fatal: false } })).to.deep.equal({
        status: 400,
        detail: 'captcha verification failed',
        error: 'captcha_failed',
        fatal: false,
        retryable: false,
      });
      expect(problemOf({ status: 400, body: { detail: 'unknown client_id', error: 'invalid_client', fatal: true } }).fatal).to.equal(true);
    });

    it('reads a detail array (422) as its field messages', () => {
      const body = {
        detail: [
          { loc: ['body', 'asn'], msg: 'must be <= 4294967295', type: 'maximum' },
          { loc: ['body'], msg: 'invalid JSON body' },
        ],
        error: 'invalid_request',
        fatal: false,
      };
      expect(problemOf({ status: 422, body }).detail).to.equal('asn: must be <= 4294967295; invalid JSON body');
    });

    it('is the network failure at status 0, retryable, and a 503 may be retried too; other statuses may not', () => {
      expect(problemOf({ status: 0, body: null })).to.deep.equal({ status: 0, detail: NETWORK_FAILURE, fatal: false, retryable: true });
      expect(problemOf({ status: 0, body: { detail: 'puzzle not solved' } }).detail).to.equal('puzzle not solved');
      expect(problemOf({ status: 503, body: { detail: 'registry unavailable' } }).retryable).to.equal(true);
      expect(problemOf({ status: 429, body: { detail: 'slow down' } }).retryable).to.equal(false);
    });

    it('words an answer without a usable body by its status, and one with only an error code by that code', () => {
      expect(problemOf({ status: 502, body: null }).detail).to.equal('The identity service answered with an unexpected error (HTTP 502).');
      // The contract's fatal shape of authorize-context is `{error, fatal: true}`: no detail is promised.
      expect(problemOf({ status: 400, body: { error: 'invalid_client', fatal: true } })).to.deep.equal({
        status: 400,
        detail: 'The identity service refused the request (invalid_client, HTTP 400).',
        error: 'invalid_client',
        fatal: true,
        retryable: false,
      });
    });
  });

  describe('classifyContext', () => {
    const context = {
      client: { name: 'App' },
      scopes: [{ id: 'openid', description: 'who you are' }],
      params: { client_id: 'c', state: 's' },
      captcha: { kind: 'pow', endpoint: '/api/v1/captcha/challenge' },
    };

    it('tells the three results of the contract apart', () => {
      expect(classifyContext({ status: 200, body: context })).to.deep.equal({ kind: 'valid', context });
      expect(
        classifyContext({
          status: 200,
          body: { redirect_to: 'https://app.example/cb?error=invalid_target', error: 'invalid_target', detail: 'resource not allowed' },
        }),
      ).to.deep.equal({
        kind: 'redirect',
        redirectTo: 'https://app.example/cb?error=invalid_target',
        error: 'invalid_target',
        detail: 'resource not allowed',
      });
      expect(classifyContext({ status: 400, body: { error: 'invalid_client', detail: 'unknown client_id', fatal: true } })).to.deep.include({ kind: 'fatal' });
    });

    it('never treats a 400 without fatal, or a failure, as a redirect', () => {
      expect(classifyContext({ status: 400, body: { redirect_to: 'https://evil.example', error: 'x', fatal: false } }).kind).to.equal('failed');
      expect(classifyContext({ status: 0, body: null }).kind).to.equal('failed');
    });

    it('keeps the captcha the backend named, and an unknown kind as none', () => {
      const out = classifyContext({ status: 200, body: { ...context, captcha: { kind: 'future', endpoint: 5 } } });
      expect(out.kind === 'valid' && out.context.captcha).to.deep.equal({ kind: 'none', endpoint: null });
    });
  });

  describe('call', () => {
    it('answers status 0 when fetch throws, and a null body for a body that is not JSON', async () => {
      expect(await call(() => Promise.reject(new TypeError('Failed to fetch')), 'GET', 'x')).to.deep.equal({ status: 0, body: null });
      expect(await call(async () => new Response('<html>bad gateway</html>', { status: 502 }), 'GET', 'x')).to.deep.equal({ status: 502, body: null });
    });

    it('sends JSON with the bearer token and no caching', async () => {
      let seen: RequestInit | undefined;
      const result = await call(
        async (_path, init) => {
          seen = init;
          return Response.json({ ok: true }, { status: 201 });
        },
        'POST',
        'api/v1/oauth/approve',
        { token: 'jwt', body: { deny: false } },
      );
      expect(result).to.deep.equal({ status: 201, body: { ok: true } });
      expect(seen).to.deep.include({ method: 'POST', body: '{"deny":false}', cache: 'no-store' });
      expect(seen!.headers).to.deep.include({ authorization: 'Bearer jwt', 'content-type': 'application/json' });
    });
  });
});
