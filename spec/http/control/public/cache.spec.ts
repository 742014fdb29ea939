import { expect } from 'chai';
import { PublicCache } from '../../../../http/control/public/cache.js';
import { TestClock } from '../../../support/system.js';

describe('PublicCache', () => {
  const counting = (clock: TestClock) => {
    let builds = 0;
    const cache = new PublicCache(300_000, clock.now, async (at) => {
      builds++;
      await new Promise((r) => setTimeout(r, 5)); // a build that takes a while, so that concurrent misses overlap it
      return { at: at.toISOString(), n: builds };
    });
    return { cache, builds: () => builds };
  };
  const body = async (c: PublicCache) => JSON.parse((await c.get()).body.toString());

  it('builds once for concurrent misses and serves the same bytes until the TTL is over', async () => {
    const clock = new TestClock();
    const { cache, builds } = counting(clock);
    const answers = await Promise.all(Array.from({ length: 8 }, () => cache.get()));
    expect(builds()).to.equal(1);
    expect(new Set(answers.map((a) => a.body)).size).to.equal(1);
    clock.advance(299_999);
    expect(await body(cache)).to.deep.equal({ at: '2026-11-01T12:00:00.000Z', n: 1 });
    clock.advance(1);
    expect(await body(cache)).to.deep.equal({ at: '2026-11-01T12:05:00.000Z', n: 2 });
  });

  it('builds again when the clock went back before the cached time', async () => {
    const clock = new TestClock();
    const { cache, builds } = counting(clock);
    await cache.get();
    clock.advance(-1);
    expect((await body(cache)).n).to.equal(2);
    expect(builds()).to.equal(2);
  });

  it('does not cache a failed build', async () => {
    const clock = new TestClock();
    let fail = true;
    const cache = new PublicCache(60_000, clock.now, async () => {
      if (fail) throw new Error('database down');
      return { ok: true };
    });
    let caught: unknown;
    try {
      await cache.get();
    } catch (err) {
      caught = err;
    }
    expect((caught as Error)?.message).to.equal('database down');
    fail = false;
    expect(JSON.parse((await cache.get()).body.toString())).to.deep.equal({ ok: true });
  });
});
