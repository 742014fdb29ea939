import { expect } from 'chai';
import { execute, handleCommand } from '../../commands/handle.js';
import { Conflict, IllegalState } from '../../domain/errors.js';
import { counter } from '../fixtures/counter.js';
import { createTestSystem, type TestSystem } from '../support/system.js';

const meta = { actor: 'spec', requestId: 'r' };

describe('command handling', () => {
  let sys: TestSystem;
  before(async () => {
    sys = await createTestSystem();
  });
  after(async () => sys.close());

  it('loads, decides and appends with the expected version', async () => {
    const now = sys.clock.now();
    const first = await handleCommand(sys.store, 'counter-a', counter, { type: 'Open', name: 'a', metadata: { now } }, meta);
    expect(first.version).to.equal(0);
    const second = await handleCommand(sys.store, 'counter-a', counter, { type: 'Increment', by: 2 }, meta);
    expect(second.state).to.deep.equal({ status: 'Open', name: 'a', value: 2 });
    expect(second.version).to.equal(1);
    const events = await sys.store.readStream('counter-a');
    expect(events.map((e) => e.type)).to.deep.equal(['CounterOpened', 'CounterIncremented']);
    expect(events[1].metadata).to.include({ actor: 'spec', requestId: 'r' });
  });

  it('retries on version conflicts so concurrent commands all land in a strict sequence', async () => {
    await handleCommand(sys.store, 'counter-b', counter, { type: 'Open', name: 'b', metadata: { now: sys.clock.now() } }, meta);
    await Promise.all(Array.from({ length: 20 }, () => handleCommand(sys.store, 'counter-b', counter, { type: 'Increment', by: 1 }, meta)));
    const values = (await sys.store.readStream('counter-b')).slice(1).map((e) => (e.data as { value: number }).value);
    expect(values).to.deep.equal(Array.from({ length: 20 }, (_, i) => i + 1));
  });

  it('passes domain errors through without appending', async () => {
    await handleCommand(sys.store, 'counter-c', counter, { type: 'Open', name: 'c', metadata: { now: sys.clock.now() } }, meta);
    await handleCommand(sys.store, 'counter-c', counter, { type: 'Close', metadata: { now: sys.clock.now() } }, meta);
    const err = await handleCommand(sys.store, 'counter-c', counter, { type: 'Increment', by: 1 }, meta).catch((e) => e);
    expect(err).to.be.instanceOf(IllegalState);
    expect(await sys.store.readStream('counter-c')).to.have.length(2);
  });

  it('appends nothing when the decision has no events', async () => {
    const result = await handleCommand(sys.store, 'counter-d', counter, { type: 'Close', metadata: { now: sys.clock.now() } }, meta);
    expect(result.events).to.deep.equal([]);
    expect(await sys.store.readStream('counter-d')).to.deep.equal([]);
  });

  it('decides again when a guarded stream it read but does not change moved meanwhile', async () => {
    await sys.store.append([{ streamId: 'guarded', expected: 'no_stream', events: [{ type: 'Set', data: { v: 1 } }] }], meta);
    let attempts = 0;
    const { result } = await execute(
      sys.store,
      ['guarded', 'dependent'],
      async (streams) => {
        attempts += 1;
        const seen = streams.guarded.version;
        if (attempts === 1) await sys.store.append([{ streamId: 'guarded', expected: 'any', events: [{ type: 'Set', data: { v: 2 } }] }], meta);
        return {
          writes: [
            { streamId: 'guarded', events: [], guard: true },
            { streamId: 'dependent', events: [{ type: 'Derived', data: { from: seen } }] },
          ],
          result: seen,
        };
      },
      meta,
    );
    expect(attempts).to.equal(2);
    expect(result).to.equal(1);
    expect((await sys.store.readStream('dependent')).map((e) => e.data)).to.deep.equal([{ from: 1 }]);
  });

  it('writes several streams in one decision atomically', async () => {
    await execute(
      sys.store,
      ['pair-1', 'pair-2'],
      () => ({
        writes: [
          { streamId: 'pair-1', events: [{ type: 'Linked', data: { to: 2 } }] },
          { streamId: 'pair-2', events: [{ type: 'Linked', data: { to: 1 } }] },
        ],
        result: null,
      }),
      meta,
    );
    const err = await execute(
      sys.store,
      ['pair-1', 'pair-3'],
      async (streams) => {
        // Another writer moves pair-1 between our read and our append, every time.
        await sys.store.append([{ streamId: 'pair-1', expected: 'any', events: [{ type: 'Interfered', data: {} }] }], meta);
        return {
          writes: [
            { streamId: 'pair-1', events: [{ type: 'X', data: {} }] },
            { streamId: 'pair-3', events: [{ type: 'Y', data: { seen: streams['pair-1'].version } }] },
          ],
          result: null,
        };
      },
      meta,
      { attempts: 3 },
    ).catch((e) => e);
    expect(err).to.be.instanceOf(Conflict);
    expect(err.message).to.equal('pair-1 was modified concurrently; retry');
    expect(await sys.store.readStream('pair-3')).to.deep.equal([]);
    expect((await sys.store.readStream('pair-1')).map((e) => e.type)).to.deep.equal(['Linked', 'Interfered', 'Interfered', 'Interfered']);
  });
});
