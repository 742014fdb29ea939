import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { KurrentEventStore } from '../../../infra/eventstore/kurrent/store.js';
import { START, comparePositions, type EventStore } from '../../../infra/eventstore/types.js';
import { createLogger } from '../../../infra/logger.js';
import { describeEventStoreContract } from './contract.js';

/**
 * The event store contract against a real KurrentDB (25.1+ for multi-stream
 * appends), e.g. EVENTSTORE_URL='kurrentdb://admin:changeit@127.0.0.1:2113?tls=false'.
 * Stream ids are unique per run, so a shared server works. Without a server the
 * suite is registered as skipped: nothing here fakes one.
 */
const url = process.env.EVENTSTORE_URL;
const log = createLogger('silent');

if (!url) {
  console.log('KurrentDB contract suite skipped: set EVENTSTORE_URL=kurrentdb://... (or esdb://...) to run it against a server');
  describe('event store contract: kurrentdb', () => {
    it.skip('skipped: set EVENTSTORE_URL=esdb://... to run the KurrentDB contract suite (no server on this machine)');
  });
} else {
  describeEventStoreContract('kurrentdb', async () => {
    const store = await KurrentEventStore.connect(url, log, { pollIntervalMs: 100 });
    return { store, close: () => store.close() };
  });

  describe('KurrentDB event store', () => {
    let store: KurrentEventStore;
    const run = randomUUID().slice(0, 8);
    beforeEach(async () => {
      store = await KurrentEventStore.connect(url, log, { pollIntervalMs: 100 });
    });
    afterEach(async () => store?.close());

    it('is not transactional and refuses inline handlers', () => {
      expect(store.transactional).to.equal(false);
      expect(() => store.onAppend(async () => {})).to.throw(/transactional/);
      expect((store as EventStore).readAllInTransaction).to.equal(undefined);
    });

    it('returns the appended events with the positions readAll reports, metadata without server properties', async () => {
      const res = await store.append(
        [
          {
            streamId: `ka-${run}`,
            expected: 'no_stream',
            events: [
              { type: 'A1', data: { n: 1 } },
              { type: 'A2', data: { n: 2 } },
            ],
          },
          { streamId: `kb-${run}`, expected: 'any', events: [{ type: 'B1', data: { n: 3 } }] },
        ],
        { actor: 'spec', correlationId: 'corr-1' },
      );
      expect(res.versions).to.deep.equal({ [`ka-${run}`]: 1, [`kb-${run}`]: 0 });
      const before = { tx: res.events[0].position.tx, pos: res.events[0].position.pos - 1n };
      const all = (await store.readAll(before.pos >= 0n ? before : START, 10_000)).filter((e) => e.streamId.endsWith(run));
      expect(all.map((e) => e.position)).to.deep.equal(res.events.map((e) => e.position));
      for (const e of all) {
        expect(Object.keys(e.metadata).filter((k) => k.startsWith('$'))).to.deep.equal([]);
        expect(e.metadata).to.include({ actor: 'spec', correlationId: 'corr-1' });
      }
    });

    it('delivers no system events and reports a head it can deliver', async () => {
      await store.append([{ streamId: `kh-${run}`, expected: 'any', events: [{ type: 'H', data: {} }] }], { actor: 'spec' });
      const last = await store.readLast(50);
      for (const e of last) {
        expect(e.streamId.startsWith('$')).to.equal(false);
        expect(e.type.startsWith('$')).to.equal(false);
      }
      const head = await store.headPosition();
      expect(comparePositions(head, last[last.length - 1].position)).to.equal(0);
      expect(await store.readAll(head, 10)).to.deep.equal([]);
    });
  });
}
