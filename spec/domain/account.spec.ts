import { expect } from 'chai';
import { accountDecider, type AccountCommand } from '../../domain/account/decide.js';
import type { AccountEvent } from '../../domain/account/events.js';
import { Conflict, TooManyRequests, Unauthorized } from '../../domain/errors.js';
import { given } from '../support/given.js';

const T0 = new Date('2026-11-01T12:00:00Z');
const at = (ms: number) => new Date(T0.getTime() + ms);
const MIN = 60_000;

const created: AccountEvent = { type: 'AccountCreated', data: { username: 'alice', password_hash: 'h1', created_at: T0.toISOString() } };
const failed = (ms = 0): AccountEvent => ({ type: 'LoginFailed', data: { at: at(ms).toISOString() } });
const started = (id: string, ms = 0, ttl = 24 * 60 * MIN): AccountEvent => ({
  type: 'LoginSucceeded',
  data: { session_id: id, token_sha256: `sha-${id}`, expires_at: at(ms + ttl).toISOString(), at: at(ms).toISOString() },
});
const success = (id: string, ms = 0): AccountCommand => ({
  type: 'RecordLoginSuccess',
  sessionId: id,
  tokenSha256: `sha-${id}`,
  expiresAt: at(ms + 24 * 60 * MIN),
  now: at(ms),
});
const failure = (ms = 0): AccountCommand => ({ type: 'RecordLoginFailure', now: at(ms) });

describe('account decider', () => {
  describe('CreateAccount', () => {
    it('creates an account on an empty stream', () => {
      given(accountDecider, []).when({ type: 'CreateAccount', username: 'alice', passwordHash: 'h1', now: T0 }).then([created]);
    });

    it('creates an account on a stream that only holds failures of the name', () => {
      given(accountDecider, [failed(), failed()]).when({ type: 'CreateAccount', username: 'alice', passwordHash: 'h1', now: T0 }).then([created]);
    });

    it('rejects a second account of the same name', () => {
      given(accountDecider, [created])
        .when({ type: 'CreateAccount', username: 'alice', passwordHash: 'h2', now: T0 })
        .thenThrows(Conflict, 'account alice already exists');
    });
  });

  describe('logins', () => {
    it('a success starts a session', () => {
      given(accountDecider, [created])
        .when(success('s1'))
        .then([started('s1')]);
    });

    it('a success on a name without an account is refused as invalid credentials', () => {
      given(accountDecider, []).when(success('s1')).thenThrows(Unauthorized, 'invalid credentials');
    });

    it('the fifth consecutive failure also blocks the name for 15 minutes', () => {
      given(accountDecider, [created, failed(), failed(), failed(), failed()])
        .when(failure(1000))
        .then([failed(1000), { type: 'LoginBlocked', data: { until: at(1000 + 15 * MIN).toISOString(), at: at(1000).toISOString() } }]);
    });

    it('unknown names are counted and blocked the same way', () => {
      given(accountDecider, [failed(), failed(), failed(), failed()])
        .when(failure())
        .then([failed(), { type: 'LoginBlocked', data: { until: at(15 * MIN).toISOString(), at: T0.toISOString() } }]);
    });

    it('a success in between resets the count', () => {
      given(accountDecider, [created, failed(), failed(), failed(), failed(), started('s1'), failed(), failed(), failed()])
        .when(failure())
        .then([failed()]);
    });

    const blocked: AccountEvent[] = [
      created,
      failed(),
      failed(),
      failed(),
      failed(),
      failed(),
      { type: 'LoginBlocked', data: { until: at(15 * MIN).toISOString(), at: T0.toISOString() } },
    ];

    it('refuses successes and failures alike while blocked', () => {
      given(accountDecider, blocked)
        .when(success('s2', 15 * MIN - 1))
        .thenThrows(TooManyRequests, 'too many attempts');
      given(accountDecider, blocked)
        .when(failure(15 * MIN - 1))
        .thenThrows(TooManyRequests, 'too many attempts');
    });

    it('counts from zero once the block has passed', () => {
      given(accountDecider, blocked)
        .when(failure(15 * MIN))
        .then([failed(15 * MIN)]);
      given(accountDecider, blocked)
        .when(success('s2', 15 * MIN))
        .then([started('s2', 15 * MIN)]);
    });
  });

  describe('ChangePassword', () => {
    it('revokes the live sessions only (not expired ones) and takes the new hash', () => {
      const history = [created, started('old', 0, 60 * MIN), started('a', 30 * MIN), started('b', 40 * MIN)];
      given(accountDecider, history)
        .when({ type: 'ChangePassword', passwordHash: 'h2', now: at(90 * MIN) })
        .then([{ type: 'PasswordChanged', data: { password_hash: 'h2', revoked_session_ids: ['a', 'b'], at: at(90 * MIN).toISOString() } }]);
    });

    it('leaves no session to revoke a second time', () => {
      given(accountDecider, [
        created,
        started('a'),
        { type: 'PasswordChanged', data: { password_hash: 'h2', revoked_session_ids: ['a'], at: T0.toISOString() } },
      ])
        .when({ type: 'ChangePassword', passwordHash: 'h3', now: at(1) })
        .thenState((state, events) => {
          expect(events[0]).to.deep.include({ type: 'PasswordChanged' });
          expect((events[0] as Extract<AccountEvent, { type: 'PasswordChanged' }>).data.revoked_session_ids).to.deep.equal([]);
          expect(state).to.deep.include({ status: 'Active', passwordHash: 'h3', sessions: [] });
        });
    });

    it('is refused for a name without an account', () => {
      given(accountDecider, [failed()]).when({ type: 'ChangePassword', passwordHash: 'h2', now: T0 }).thenThrows(Unauthorized, 'invalid credentials');
    });
  });
});
