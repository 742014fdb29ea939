import { expect } from 'chai';
import { batchedReads, MAX_BATCH } from '../../../http/shared/batch.js';

describe('batched reads', () => {
  it('reads the loads of one event-loop turn together, each answered in its place, and caches nothing', async () => {
    const batches: number[][] = [];
    let value = 0;
    const read = batchedReads(async (keys: readonly number[]) => {
      batches.push([...keys]);
      value++;
      return keys.map((k) => `${k}@${value}`);
    });
    const first = await Promise.all([3, 1, 3, 2].map((k) => read(k)));
    expect(first).to.deep.equal(['3@1', '1@1', '3@1', '2@1']);
    // A later turn is a new read: nothing is served from the previous one.
    expect(await read(3)).to.equal('3@2');
    expect(batches).to.deep.equal([[3, 1, 3, 2], [3]]);
  });

  it('gathers requests of different I/O callbacks in one turn (setImmediate), and splits at MAX_BATCH', async () => {
    const sizes: number[] = [];
    const read = batchedReads(async (keys: readonly number[]) => {
      sizes.push(keys.length);
      return [...keys];
    });
    // Loads from separate callbacks of one loop turn (as separate sockets' requests are): the
    // immediates queued here all run in one check phase, with the tick queue drained between them.
    const loads: Promise<number>[] = [];
    await new Promise<void>((resolve) => {
      for (let i = 0; i < MAX_BATCH + 10; i++) setImmediate(() => loads.push(read(i)));
      setImmediate(resolve);
    });
    expect(await Promise.all(loads)).to.deep.equal(Array.from({ length: MAX_BATCH + 10 }, (_, i) => i));
    expect(sizes).to.deep.equal([MAX_BATCH, 10]);
  });

  it('fails every load of a batch whose read failed, and the next batch reads again', async () => {
    let fail = true;
    const read = batchedReads(async (keys: readonly string[]) => {
      if (fail) throw new Error('connection lost');
      return keys.map((k) => k.toUpperCase());
    });
    const results = await Promise.allSettled([read('a'), read('b')]);
    expect(results.map((r) => r.status)).to.deep.equal(['rejected', 'rejected']);
    fail = false;
    expect(await read('a')).to.equal('A');
  });
});
