import { expect } from 'chai';
import {
  checkAuthorizationRequest,
  paramValuesOfParams,
  paramValuesOfQuery,
  redirectWith,
  type ClientView,
} from '../../../domain/identity/authorization-request.js';

const client: ClientView = { client_id: 'app', name: 'App', redirect_uris: ['https://app.example/cb?tenant=1'] };
const RESOURCE = 'https://api.example/';
const valid = {
  client_id: 'app',
  redirect_uri: 'https://app.example/cb?tenant=1',
  response_type: 'code',
  scope: 'openid',
  code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
  code_challenge_method: 'S256',
};
const check = (params: Record<string, string | string[] | undefined>) =>
  checkAuthorizationRequest(paramValuesOfParams({ ...valid, ...params }), client, [RESOURCE]);

describe('authorization request rules', () => {
  it('normalises scopes to the known ones in discovery order and resources to one each', () => {
    const result = check({ scope: 'dn42 phone openid openid profile', resource: [RESOURCE, RESOURCE] });
    expect(result).to.deep.include({ result: 'valid' });
    if (result.result !== 'valid') return;
    expect(result.params.scope).to.equal('openid profile dn42');
    expect(result.params.resource).to.deep.equal([RESOURCE]);
    expect(result.params).not.to.have.any.keys('state', 'nonce');
  });

  it('checks the client before anything else, and the redirect URI exactly', () => {
    expect(checkAuthorizationRequest(paramValuesOfParams({ ...valid, response_type: 'token' }), undefined, [])).to.deep.include({
      result: 'fatal',
      error: 'invalid_client',
    });
    expect(check({ client_id: 'other' })).to.deep.include({ result: 'fatal', error: 'invalid_client' });
    expect(check({ redirect_uri: 'https://app.example/cb' })).to.deep.include({ result: 'fatal', error: 'invalid_redirect_uri' });
    expect(check({ redirect_uri: 'https://APP.example/cb?tenant=1' })).to.deep.include({ result: 'fatal', error: 'invalid_redirect_uri' });
  });

  it('leaves out of the error redirect a state that was repeated or too long', () => {
    const repeated = checkAuthorizationRequest(paramValuesOfQuery(`${new URLSearchParams(valid)}&state=a&state=b`), client, []);
    expect(repeated).to.deep.include({ result: 'redirect', error: 'invalid_request' });
    expect(repeated).not.to.have.property('state');
    const long = check({ state: 'x'.repeat(1025) });
    expect(long).to.deep.include({ result: 'redirect', error: 'invalid_request' });
    expect(long).not.to.have.property('state');
  });

  it('keeps the registered query of a redirect URI and appends the response to it', () => {
    expect(redirectWith('https://app.example/cb?tenant=1', { code: 'c', state: 's&t', iss: 'https://id.example', skipped: undefined })).to.equal(
      'https://app.example/cb?tenant=1&code=c&state=s%26t&iss=https%3A%2F%2Fid.example',
    );
  });
});
