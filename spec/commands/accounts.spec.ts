import { expect } from 'chai';
import { createAccount, login } from '../../commands/accounts.js';
import { Unauthorized } from '../../domain/errors.js';
import { argon2Hasher, type PasswordHasher } from '../../infra/passwords.js';
import { createTestSystem, type TestSystem } from '../support/system.js';

/** The real argon2 hasher, recording which hash each verification ran against. */
function recordingHasher(): PasswordHasher & { verified: string[] } {
  const real = argon2Hasher();
  const verified: string[] = [];
  return { ...real, verified, verify: (hash, password) => (verified.push(hash), real.verify(hash, password)) };
}

const params = (hash: string) => hash.split('$').slice(1, 4).join('$');

describe('login command: equal cost for unknown names and wrong passwords', function () {
  this.timeout(30_000);
  let sys: TestSystem;
  const hasher = recordingHasher();
  const deps = () => ({ store: sys.store, passwords: hasher });
  const input = (username: string, password: string) => ({ username, password, now: sys.clock.now(), sessionTtlMs: 60_000 });

  before(async () => {
    sys = await createTestSystem();
    await createAccount(deps(), { username: 'alice', password: 'alice password', now: sys.clock.now() }, { actor: 'spec' });
  });
  after(() => sys.close());

  it('verifies once against an argon2id hash with the same parameters on both refusals', async () => {
    hasher.verified.length = 0;
    for (const [username, password] of [
      ['alice', 'wrong'],
      ['mallory', 'wrong'],
      ['NOT A NAME', 'wrong'],
    ]) {
      let caught: unknown;
      await login(deps(), input(username, password), { actor: 'spec' }).catch((err) => (caught = err));
      expect(caught).to.be.instanceOf(Unauthorized);
      expect((caught as Error).message).to.equal('invalid credentials');
    }
    expect(hasher.verified).to.have.length(3);
    const [real, dummy, dummyAgain] = hasher.verified;
    expect(real).to.not.equal(dummy);
    expect(dummy).to.equal(dummyAgain);
    expect(params(dummy)).to.equal(params(real));
    expect(params(real)).to.equal('argon2id$v=19$m=19456,t=2,p=1');
  });

  it('a correct password still logs in after the wrong ones', async () => {
    const session = await login(deps(), input('alice', 'alice password'), { actor: 'spec' });
    expect(session.token).to.have.length(43);
  });
});
