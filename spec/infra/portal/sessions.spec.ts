import { expect } from 'chai';
import { beginLogin, findPortalSession, prunePortal, takeLogin } from '../../../infra/portal/sessions.js';
import { givenPortalSessionWithId } from '../../support/portal.js';
import { createTestSystem, type TestSystem } from '../../support/system.js';

describe('Portal session store (infra/portal/sessions.ts)', function () {
  this.timeout(30_000);
  let sys: TestSystem;
  before(async () => {
    sys = await createTestSystem();
  });
  after(async () => {
    await sys?.close();
  });
  const count = async (table: string) => Number((await sys.pool.query(`SELECT count(*) FROM ${table}`)).rows[0].count);

  it('keeps only the sha256 of a session token, and finds the session by the token', async () => {
    const { token, id } = await givenPortalSessionWithId(sys);
    const { rows } = await sys.pool.query('SELECT to_jsonb(s)::text AS row FROM portal_sessions s WHERE id = $1', [id]);
    expect(rows[0].row).to.not.include(token);
    expect((await findPortalSession(sys.pool, token, sys.clock.now()))?.id).to.equal(id);
  });

  it('takes a login transaction once', async () => {
    await beginLogin(sys.pool, 'state-once', { nonce: 'n', codeVerifier: 'v', next: '/x' }, sys.clock.now());
    expect(await takeLogin(sys.pool, 'state-once', sys.clock.now())).to.deep.equal({ nonce: 'n', codeVerifier: 'v', next: '/x' });
    expect(await takeLogin(sys.pool, 'state-once', sys.clock.now())).to.equal(undefined);
  });

  it('prunes expired login transactions at once and expired sessions a day after their expiry', async () => {
    await sys.pool.query('DELETE FROM portal_sessions; DELETE FROM portal_login_transactions');
    await givenPortalSessionWithId(sys, { ttlSeconds: 60 });
    await givenPortalSessionWithId(sys);
    await beginLogin(sys.pool, 'state-old', { nonce: 'n', codeVerifier: 'v', next: null }, sys.clock.now());
    sys.clock.advance(21 * 60_000);
    await beginLogin(sys.pool, 'state-new', { nonce: 'n', codeVerifier: 'v', next: null }, sys.clock.now());
    expect(await prunePortal(sys.pool, sys.clock.now())).to.equal(1);
    expect(await count('portal_login_transactions')).to.equal(1);
    expect(await count('portal_sessions')).to.equal(2);
    sys.clock.advance(86_400_000);
    expect(await prunePortal(sys.pool, sys.clock.now())).to.equal(2);
    expect(await count('portal_sessions')).to.equal(1);
  });
});
