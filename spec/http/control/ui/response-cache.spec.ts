import { expect } from 'chai';
import { ResponseCache } from '../../../../http/control/ui/response-cache.js';

describe('ResponseCache (console answers cached per full URL)', () => {
  it('answers the same value within the window and builds again after it', async () => {
    let t = 0;
    let builds = 0;
    const cache = new ResponseCache<number>(3000, () => new Date(t));
    const build = async () => ++builds;
    expect(await cache.get('/a', build)).to.equal(1);
    t = 2999;
    expect(await cache.get('/a', build)).to.equal(1);
    t = 3000;
    expect(await cache.get('/a', build)).to.equal(2);
  });

  it('keeps at most maxEntries answers: a further distinct URL is answered but not kept', async () => {
    let builds = 0;
    const cache = new ResponseCache<number>(3000, () => new Date(0), 2);
    const build = async () => ++builds;
    await cache.get('/a', build);
    await cache.get('/b', build);
    expect(await cache.get('/c', build)).to.equal(3);
    expect(await cache.get('/c', build), 'not kept: built again').to.equal(4);
    expect(await cache.get('/a', build), 'the kept ones still answer').to.equal(1);
  });

  it('does not keep a failed build', async () => {
    const cache = new ResponseCache<number>(3000, () => new Date(0));
    await cache.get('/a', () => Promise.reject(new Error('db down'))).catch(() => undefined);
    expect(await cache.get('/a', async () => 7)).to.equal(7);
  });
});
