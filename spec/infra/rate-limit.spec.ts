import { expect } from 'chai';
import { pruneRateLimits, rateLimit } from '../../infra/rate-limit.js';
import { createTestSystem, type TestSystem } from '../support/system.js';

describe('rate limit (PostgreSQL sliding window)', () => {
  let sys: TestSystem;
  before(async () => {
    sys = await createTestSystem();
  });
  after(() => sys.close());

  const at = (seconds: number) => new Date(Date.UTC(2026, 10, 1, 12, 0, seconds));

  it('lets `limit` hits through inside the window and refuses the next', async () => {
    const limit = rateLimit(sys.pool, { pool: 'take-test', limit: 3, windowSeconds: 60 });
    expect(await limit.take('a', at(0))).to.equal(true);
    expect(await limit.take('a', at(1))).to.equal(true);
    expect(await limit.take('a', at(2))).to.equal(true);
    expect(await limit.take('a', at(3))).to.equal(false);
    expect(await limit.take('b', at(3)), 'another key has its own count').to.equal(true);
  });

  it('forgets hits once they slide out of the window', async () => {
    const limit = rateLimit(sys.pool, { pool: 'slide-test', limit: 2, windowSeconds: 10 });
    await limit.record('k', at(0));
    await limit.record('k', at(5));
    expect(await limit.exceeded('k', at(9))).to.equal(true);
    expect(await limit.exceeded('k', at(10)), 'the hit at 0 left the window at 10').to.equal(false);
    expect(await limit.exceeded('k', at(15))).to.equal(false);
  });

  it('keeps pools apart and is shared by every handle on the same table', async () => {
    const one = rateLimit(sys.pool, { pool: 'pool-one', limit: 1, windowSeconds: 60 });
    const again = rateLimit(sys.pool, { pool: 'pool-one', limit: 1, windowSeconds: 60 });
    const other = rateLimit(sys.pool, { pool: 'pool-two', limit: 1, windowSeconds: 60 });
    await one.record('ip', at(0));
    expect(await again.exceeded('ip', at(1)), 'a second instance sees the hit').to.equal(true);
    expect(await other.exceeded('ip', at(1))).to.equal(false);
  });

  it('prunes only keys whose newest hit is more than a day old; a pruned key starts afresh', async () => {
    const limit = rateLimit(sys.pool, { pool: 'prune-test', limit: 1, windowSeconds: 600 });
    const day = 86_400_000;
    await limit.record('old', at(0));
    await limit.record('recent', new Date(at(0).getTime() + day));
    const pruned = await pruneRateLimits(sys.pool, new Date(at(1).getTime() + day));
    expect(pruned).to.be.greaterThanOrEqual(1);
    const { rows } = await sys.pool.query(`SELECT key FROM rate_limit_hits WHERE pool = 'prune-test' ORDER BY key`);
    expect(rows.map((r) => r.key)).to.deep.equal(['recent']);
    expect(await limit.exceeded('recent', new Date(at(2).getTime() + day)), 'a kept key still counts').to.equal(true);
  });

  it('releases exactly one hit recorded at a time: a reservation that did not count', async () => {
    const limit = rateLimit(sys.pool, { pool: 'release-test', limit: 2, windowSeconds: 60 });
    expect(await limit.take('k', at(0))).to.equal(true);
    expect(await limit.take('k', at(0))).to.equal(true);
    expect(await limit.exceeded('k', at(1))).to.equal(true);
    await limit.release('k', at(0));
    expect(await limit.exceeded('k', at(1)), 'one of the two equal hits is gone').to.equal(false);
    await limit.release('k', at(30));
    expect(await limit.take('k', at(2)), 'releasing a time with no hit changes nothing').to.equal(true);
    expect(await limit.take('k', at(3))).to.equal(false);
  });

  it('reserves at most `limit` places among concurrent callers, records nothing for a refusal, and frees a released place', async () => {
    const limit = rateLimit(sys.pool, { pool: 'reserve-test', limit: 5, windowSeconds: 60 });
    const answers = await Promise.all(Array.from({ length: 20 }, () => limit.reserve('ip', at(0))));
    expect(answers.filter(Boolean)).to.have.length(5);
    const { rows } = await sys.pool.query(`SELECT cardinality(hits) AS n FROM rate_limit_hits WHERE pool = 'reserve-test'`);
    expect(rows[0].n).to.equal(5);
    await limit.release('ip', at(0));
    expect(await limit.reserve('ip', at(1))).to.equal(true);
    expect(await limit.reserve('ip', at(1))).to.equal(false);
  });

  it('refuses a window longer than rows are kept', () => {
    expect(() => rateLimit(sys.pool, { pool: 'too-long', limit: 1, windowSeconds: 2 * 86_400 })).to.throw(/longer than/);
  });

  it('never lets more than `limit` concurrent takes through', async () => {
    const limit = rateLimit(sys.pool, { pool: 'race-test', limit: 5, windowSeconds: 60 });
    const results = await Promise.all(Array.from({ length: 20 }, () => limit.take('k', at(0))));
    expect(results.filter(Boolean).length, 'exactly the limit passes').to.equal(5);
  });
});
