import { expect } from 'chai';
import { GroupCommit } from '../../../infra/db/group-commit.js';

describe('infra: group commit of concurrent writes', () => {
  type Item = { node: string; n: number };
  const recorder = (fail?: (item: Item) => boolean) => {
    const writes: number[][] = [];
    const commit = new GroupCommit<Item>(
      async (items) => {
        writes.push(items.map((i) => i.n));
        await new Promise((r) => setImmediate(r));
        if (fail && items.some(fail)) throw new Error(`refused ${items.filter(fail).map((i) => i.n)}`);
      },
      (i) => i.node,
    );
    return { writes, commit };
  };

  it('writes the items added in one turn of the event loop together, and settles each once that write is done', async () => {
    const { writes, commit } = recorder();
    let settled = 0;
    const all = [1, 2, 3].map((n) => commit.add({ node: `n${n}`, n }).then(() => settled++));
    expect(settled).to.equal(0);
    await Promise.all(all);
    expect(writes).to.deep.equal([[1, 2, 3]]);
    await commit.add({ node: 'n1', n: 4 });
    expect(writes).to.deep.equal([[1, 2, 3], [4]]);
  });

  it("gives a failed write's error to the item that caused it only: the others are written one by one", async () => {
    const { writes, commit } = recorder((i) => i.n === 2);
    const outcomes = await Promise.allSettled([1, 2, 3].map((n) => commit.add({ node: `n${n}`, n })));
    expect(outcomes.map((o) => o.status)).to.deep.equal(['fulfilled', 'rejected', 'fulfilled']);
    expect((outcomes[1] as PromiseRejectedResult).reason.message).to.equal('refused 2');
    expect(writes).to.deep.equal([[1, 2, 3], [1], [2], [3]]);
  });

  it('never puts two items of one key in one write: the later waits for the earlier', async () => {
    const { writes, commit } = recorder();
    await Promise.all([commit.add({ node: 'a', n: 1 }), commit.add({ node: 'a', n: 2 }), commit.add({ node: 'b', n: 3 })]);
    expect(writes).to.deep.equal([[1, 3], [2]]);
  });
  it("keeps a key's later item out of every write until its earlier write has settled, also one flushed meanwhile", async () => {
    const log: string[] = [];
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const commit = new GroupCommit<Item>(
      async (items) => {
        const ns = items.map((i) => i.n).join(',');
        log.push(`start ${ns}`);
        if (items.some((i) => i.n === 1)) await held;
        log.push(`end ${ns}`);
      },
      (i) => i.node,
    );
    const first = commit.add({ node: 'a', n: 1 });
    await new Promise((r) => setImmediate(r));
    // The write of item 1 is running: item 2 (same key) waits for it, item 3 goes ahead in a write of its own.
    const rest = [commit.add({ node: 'a', n: 2 }), commit.add({ node: 'b', n: 3 })];
    await rest[1];
    expect(log).to.deep.equal(['start 1', 'start 3', 'end 3']);
    release();
    await Promise.all([first, ...rest]);
    expect(log).to.deep.equal(['start 1', 'start 3', 'end 3', 'end 1', 'start 2', 'end 2']);
  });
});
