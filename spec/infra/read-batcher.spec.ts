import { expect } from 'chai';
import { ReadBatcher } from '../../infra/db/read-batcher.js';

/** A load whose answers the spec releases one call at a time (a barrier), recording the keys of each call. */
function gatedLoad() {
  const calls: string[][] = [];
  const gates: (() => void)[] = [];
  const load = (keys: string[]) => {
    calls.push(keys);
    return new Promise<Map<string, string>>((resolve) => gates.push(() => resolve(new Map(keys.map((k) => [k, `v:${k}`])))));
  };
  return { calls, gates, load };
}

describe('ReadBatcher', () => {
  it('starts a read at once when none runs, and sends the keys asked for meanwhile together in the next one', async () => {
    const { calls, gates, load } = gatedLoad();
    const batcher = new ReadBatcher(load);
    const first = batcher.get('a');
    expect(calls).to.deep.equal([['a']]); // started without waiting
    const later = [batcher.get('b'), batcher.get('c'), batcher.get('b')];
    expect(calls).to.have.length(1); // nothing starts while one is in flight
    gates[0]();
    expect(await first).to.equal('v:a');
    await new Promise((r) => setImmediate(r));
    expect(calls).to.deep.equal([['a'], ['b', 'c']]);
    gates[1]();
    expect(await Promise.all(later)).to.deep.equal(['v:b', 'v:c', 'v:b']);
  });

  it('answers undefined for a key the read did not find, and fails only the keys of a failed read', async () => {
    let fail = true;
    const batcher = new ReadBatcher<string, number>(async (keys) => {
      if (fail) throw new Error('database gone');
      return new Map(keys.filter((k) => k !== 'missing').map((k) => [k, k.length]));
    });
    await batcher.get('x').then(
      () => expect.fail('the read failed'),
      (err: Error) => expect(err.message).to.equal('database gone'),
    );
    fail = false;
    expect(await batcher.get('four')).to.equal(4);
    expect(await batcher.get('missing')).to.equal(undefined);
  });
});
