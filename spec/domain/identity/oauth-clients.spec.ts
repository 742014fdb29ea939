import { expect } from 'chai';
import { Conflict, NotFound, Validation } from '../../../domain/errors.js';
import { oauthClientDecider, redirectUriProblem, type OAuthClientEvent } from '../../../domain/identity/oauth-clients.js';
import { given } from '../../support/given.js';

const now = new Date('2026-11-01T12:00:00Z');
const client = { client_id: 'c1', name: 'App', redirect_uris: ['https://app.example/cb'], confidential: true, secret_sha256: 'a'.repeat(64) };
const registered: OAuthClientEvent = { type: 'OAuthClientRegistered', data: { ...client, registered_at: now.toISOString() } };

describe('OAuth application decider', () => {
  it('registers an application with the secret digest only', () => {
    given(oauthClientDecider, []).when({ type: 'RegisterOAuthClient', client, now }).then([registered]);
  });

  it('refuses an id that exists or existed', () => {
    given(oauthClientDecider, [registered]).when({ type: 'RegisterOAuthClient', client, now }).thenThrows(Conflict, 'oauth client c1 already exists');
    given(oauthClientDecider, [registered, { type: 'OAuthClientDeregistered', data: { client_id: 'c1', at: now.toISOString() } }])
      .when({ type: 'RegisterOAuthClient', client, now })
      .thenThrows(Conflict);
  });

  it('refuses redirect URIs outside the rules, naming each', () => {
    const err = given(oauthClientDecider, [])
      .when({ type: 'RegisterOAuthClient', client: { ...client, redirect_uris: ['https://ok.example/cb', 'http://app.example/cb'] }, now })
      .thenThrows(Validation) as Validation;
    expect(err.errors.map((e) => e.loc)).to.deep.equal([['body', 'redirect_uris', 1]]);
  });

  it('deregisters once; unknown or gone is not found', () => {
    given(oauthClientDecider, [registered])
      .when({ type: 'DeregisterOAuthClient', clientId: 'c1', now })
      .then([{ type: 'OAuthClientDeregistered', data: { client_id: 'c1', at: now.toISOString() } }]);
    given(oauthClientDecider, []).when({ type: 'DeregisterOAuthClient', clientId: 'c1', now }).thenThrows(NotFound, 'unknown oauth client c1');
    given(oauthClientDecider, [registered, { type: 'OAuthClientDeregistered', data: { client_id: 'c1', at: now.toISOString() } }])
      .when({ type: 'DeregisterOAuthClient', clientId: 'c1', now })
      .thenThrows(NotFound);
  });

  it('allows https anywhere and plain http only on loopback', () => {
    for (const ok of [
      'https://app.example/cb',
      'https://app.example:8443/cb?x=1',
      'http://127.0.0.1/cb',
      'http://127.0.0.1:53682/',
      'http://[::1]:8080/cb',
      'http://localhost:3000/cb',
    ]) {
      expect(redirectUriProblem(ok), ok).to.equal(undefined);
    }
    expect(redirectUriProblem('http://app.example/cb')).to.match(/loopback/);
    expect(redirectUriProblem('http://127.0.0.2/cb')).to.match(/loopback/);
    expect(redirectUriProblem('http://localhost.evil.example/cb')).to.match(/loopback/);
    expect(redirectUriProblem('myapp://cb')).to.equal('must use https');
    expect(redirectUriProblem('https://app.example/cb#x')).to.match(/fragment/);
    expect(redirectUriProblem('https://u:p@app.example/cb')).to.match(/credentials/);
    expect(redirectUriProblem('cb')).to.equal('not an absolute URI');
  });
});
