import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { eventually } from '../../support/wait.js';
import { START, WrongExpectedVersion, comparePositions, type EventStore, type RecordedEvent } from '../../../infra/eventstore/types.js';

/**
 * The behaviour every event store adapter owes the rest of the system. Each
 * adapter's spec calls this with a factory for a fresh, empty store.
 */
export interface ContractSubject {
  store: EventStore;
  close(): Promise<void>;
}

const meta = { actor: 'spec', requestId: 'req-1', clientAddress: '127.0.0.1', causationId: 'cause-1' };

const ev = (type: string, data: unknown = {}) => ({ type, data });

export function describeEventStoreContract(name: string, subject: () => Promise<ContractSubject>): void {
  describe(`event store contract: ${name}`, function () {
    let s: ContractSubject;
    let store: EventStore;
    // Stream ids unique per test, so a shared store could run the suite too.
    let id: (name: string) => string;

    beforeEach(async function () {
      s = await subject();
      store = s.store;
      const run = randomUUID().slice(0, 8);
      id = (n) => `${n}-${run}`;
    });
    afterEach(async () => s.close());

    describe('expected versions', () => {
      it('creates a stream with no_stream and refuses a second no_stream append', async () => {
        const res = await store.append([{ streamId: id('a'), expected: 'no_stream', events: [ev('A1'), ev('A2')] }], meta);
        expect(res.versions[id('a')]).to.equal(1);
        const err = await store.append([{ streamId: id('a'), expected: 'no_stream', events: [ev('A3')] }], meta).catch((e) => e);
        expect(err).to.be.instanceOf(WrongExpectedVersion);
        expect(err.actual).to.equal(1);
        expect((await store.readStream(id('a'))).map((e) => e.type)).to.deep.equal(['A1', 'A2']);
      });

      it('refuses exists on a missing stream and accepts it on an existing one', async () => {
        const err = await store.append([{ streamId: id('b'), expected: 'exists', events: [ev('B1')] }], meta).catch((e) => e);
        expect(err).to.be.instanceOf(WrongExpectedVersion);
        expect(err.actual).to.equal('no_stream');
        await store.append([{ streamId: id('b'), expected: 'no_stream', events: [ev('B1')] }], meta);
        const ok = await store.append([{ streamId: id('b'), expected: 'exists', events: [ev('B2')] }], meta);
        expect(ok.versions[id('b')]).to.equal(1);
      });

      it('accepts an exact version and refuses a stale one', async () => {
        await store.append([{ streamId: id('c'), expected: 'no_stream', events: [ev('C1')] }], meta);
        await store.append([{ streamId: id('c'), expected: 0, events: [ev('C2')] }], meta);
        const stale = await store.append([{ streamId: id('c'), expected: 0, events: [ev('C3')] }], meta).catch((e) => e);
        expect(stale).to.be.instanceOf(WrongExpectedVersion);
        expect(stale.expected).to.equal(0);
        expect(stale.actual).to.equal(1);
        const ahead = await store.append([{ streamId: id('c'), expected: 5, events: [ev('C3')] }], meta).catch((e) => e);
        expect(ahead).to.be.instanceOf(WrongExpectedVersion);
        expect((await store.readStream(id('c'))).map((e) => e.version)).to.deep.equal([0, 1]);
      });

      it('refuses an exact version on a stream that does not exist, and writes several events at an exact version in order', async () => {
        const missing = await store.append([{ streamId: id('e'), expected: 0, events: [ev('E0')] }], meta).catch((e) => e);
        expect(missing).to.be.instanceOf(WrongExpectedVersion);
        expect(missing.actual).to.equal('no_stream');
        expect(await store.streamVersion(id('e'))).to.equal(-1);
        await store.append([{ streamId: id('e'), expected: 'no_stream', events: [ev('E0')] }], meta);
        const res = await store.append([{ streamId: id('e'), expected: 0, events: [ev('E1', { n: 1 }), ev('E2', { n: 2 }), ev('E3', { n: 3 })] }], meta);
        expect(res.versions[id('e')]).to.equal(3);
        expect(res.events.map((e) => [e.type, e.version, e.data])).to.deep.equal([
          ['E1', 1, { n: 1 }],
          ['E2', 2, { n: 2 }],
          ['E3', 3, { n: 3 }],
        ]);
        expect((await store.readStream(id('e'))).map((e) => [e.type, e.version, e.data])).to.deep.equal([
          ['E0', 0, {}],
          ['E1', 1, { n: 1 }],
          ['E2', 2, { n: 2 }],
          ['E3', 3, { n: 3 }],
        ]);
      });

      it("tells a stream's version without reading its events, -1 for a missing stream", async () => {
        expect(await store.streamVersion(id('v'))).to.equal(-1);
        await store.append([{ streamId: id('v'), expected: 'no_stream', events: [ev('V1'), ev('V2')] }], meta);
        expect(await store.streamVersion(id('v'))).to.equal(1);
        await store.append([{ streamId: id('v'), expected: 1, events: [ev('V3')] }], meta);
        expect(await store.streamVersion(id('v'))).to.equal(2);
      });

      it('appends with any whether or not the stream exists', async () => {
        await store.append([{ streamId: id('d'), expected: 'any', events: [ev('D1')] }], meta);
        const res = await store.append([{ streamId: id('d'), expected: 'any', events: [ev('D2'), ev('D3')] }], meta);
        expect(res.versions[id('d')]).to.equal(2);
      });

      it('lets exactly one of many concurrent writers with the same expected version win', async () => {
        await store.append([{ streamId: id('race'), expected: 'no_stream', events: [ev('R0')] }], meta);
        const results = await Promise.allSettled(
          Array.from({ length: 12 }, (_, i) => store.append([{ streamId: id('race'), expected: 0, events: [ev('R', { i })] }], meta)),
        );
        expect(results.filter((r) => r.status === 'fulfilled')).to.have.length(1);
        for (const r of results) if (r.status === 'rejected') expect(r.reason).to.be.instanceOf(WrongExpectedVersion);
        expect(await store.readStream(id('race'))).to.have.length(2);
      });
    });

    describe('multi-stream appends', () => {
      it('writes every stream of an append or none of them', async () => {
        await store.append([{ streamId: id('m2'), expected: 'no_stream', events: [ev('X')] }], meta);
        const err = await store
          .append(
            [
              { streamId: id('m1'), expected: 'no_stream', events: [ev('M1')] },
              { streamId: id('m2'), expected: 'no_stream', events: [ev('M2')] },
              { streamId: id('m3'), expected: 'any', events: [ev('M3')] },
            ],
            meta,
          )
          .catch((e) => e);
        expect(err).to.be.instanceOf(WrongExpectedVersion);
        expect(err.streamId).to.equal(id('m2'));
        expect(await store.readStream(id('m1'))).to.deep.equal([]);
        expect(await store.readStream(id('m3'))).to.deep.equal([]);
        expect((await store.readStream(id('m2'))).map((e) => e.type)).to.deep.equal(['X']);
      });

      it('commits all streams together with their versions', async () => {
        const res = await store.append(
          [
            { streamId: id('n1'), expected: 'no_stream', events: [ev('N1a'), ev('N1b')] },
            { streamId: id('n2'), expected: 'no_stream', events: [ev('N2')] },
          ],
          meta,
        );
        expect(res.versions).to.deep.equal({ [id('n1')]: 1, [id('n2')]: 0 });
        expect(res.events).to.have.length(3);
      });
    });

    describe('reading', () => {
      it('reads a stream in version order with data and metadata', async () => {
        await store.append([{ streamId: id('r'), expected: 'no_stream', events: [ev('R1', { n: 1, nested: { ok: true } }), ev('R2', { n: 2 })] }], meta);
        const events = await store.readStream(id('r'));
        expect(events.map((e) => [e.version, e.type, e.data])).to.deep.equal([
          [0, 'R1', { n: 1, nested: { ok: true } }],
          [1, 'R2', { n: 2 }],
        ]);
        expect(events[0].metadata).to.include({ actor: 'spec', requestId: 'req-1', clientAddress: '127.0.0.1', causationId: 'cause-1' });
        expect(events[0].metadata.recordedAt).to.be.a('string');
        expect(events[0].recordedAt).to.be.instanceOf(Date);
        expect(events[0].id).to.match(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
        expect(events[1].id).not.to.equal(events[0].id);
        expect(await store.readStream(id('r'), { fromVersion: 1 })).to.have.length(1);
        expect(await store.readStream(id('nothing'))).to.deep.equal([]);
      });

      it('reads many streams in one call, each from its own version, as readStream reads each', async () => {
        await store.append(
          [
            { streamId: id('ma'), expected: 'no_stream', events: [ev('A1', { n: 1 }), ev('A2', { n: 2 }), ev('A3', { n: 3 })] },
            { streamId: id('mb'), expected: 'no_stream', events: [ev('B1', { deep: { x: [1] } })] },
          ],
          meta,
        );
        await store.append([{ streamId: id('mb'), expected: 0, events: [ev('B2')] }], meta);
        const read = await store.readStreams(
          new Map([
            [id('ma'), 1],
            [id('mb'), 0],
            [id('mnone'), 0],
            [id('mpast'), 7],
          ]),
        );
        expect([...read.keys()].sort()).to.deep.equal([id('ma'), id('mb'), id('mnone'), id('mpast')].sort());
        expect(read.get(id('ma'))!.map((e) => [e.version, e.type, e.data])).to.deep.equal([
          [1, 'A2', { n: 2 }],
          [2, 'A3', { n: 3 }],
        ]);
        expect(read.get(id('mb'))).to.deep.equal(await store.readStream(id('mb')));
        expect(read.get(id('mb'))!.map((e) => e.type)).to.deep.equal(['B1', 'B2']);
        expect(read.get(id('mnone'))).to.deep.equal([]);
        expect(read.get(id('mpast'))).to.deep.equal([]);
        expect((await store.readStreams(new Map([[id('ma'), 3]]))).get(id('ma'))).to.deep.equal([]);
        expect((await store.readStreams(new Map())).size).to.equal(0);
      });

      it('reads many streams with what a fold needs, the same events as readStreams, where the store offers it', async () => {
        if (!store.readStreamsData) return;
        await store.append([{ streamId: id('da'), expected: 'no_stream', events: [ev('A1', { n: 1 }), ev('A2', { n: 2 })] }], meta);
        const from = new Map([
          [id('da'), 1],
          [id('dnone'), 0],
        ]);
        const data = await store.readStreamsData(from);
        const full = await store.readStreams(from);
        expect([...data.keys()].sort()).to.deep.equal([id('da'), id('dnone')].sort());
        expect(data.get(id('da'))).to.deep.equal(full.get(id('da'))!.map((e) => ({ version: e.version, type: e.type, data: e.data })));
        expect(data.get(id('dnone'))).to.deep.equal([]);
      });

      it('reads many stream versions in one call (-1 for a stream that does not exist)', async () => {
        await store.append([{ streamId: id('va'), expected: 'no_stream', events: [ev('A1'), ev('A2')] }], meta);
        await store.append([{ streamId: id('vb'), expected: 'no_stream', events: [ev('B1')] }], meta);
        const versions = await store.streamVersions([id('vb'), id('vnone'), id('va')]);
        expect(Object.fromEntries(versions)).to.deep.equal({ [id('va')]: 1, [id('vb')]: 0, [id('vnone')]: -1 });
        expect((await store.streamVersions([])).size).to.equal(0);
      });

      it('reads all events in one global order, page by page from a position', async () => {
        for (let i = 0; i < 7; i++) await store.append([{ streamId: id(`g${i % 3}`), expected: 'any', events: [ev('G', { i })] }], meta);
        const mine = (events: RecordedEvent[]) => events.filter((e) => e.streamId.endsWith(id('')));
        // readAll delivers only proven-committed events: another session's open
        // transaction can hold them back for a moment, so wait for all seven.
        let all: RecordedEvent[] = [];
        await eventually(async () => (all = mine(await store.readAll(START, 10_000))).length === 7, { what: 'seven events', timeoutMs: 10_000 });
        expect(all.map((e) => (e.data as { i: number }).i)).to.deep.equal([0, 1, 2, 3, 4, 5, 6]);
        for (let i = 1; i < all.length; i++) expect(comparePositions(all[i - 1].position, all[i].position)).to.equal(-1);
        const page = await store.readAll(all[2].position, 2);
        expect(page.map((e) => e.position)).to.deep.equal([all[3].position, all[4].position].slice(0, page.length));
        const head = await store.headPosition();
        expect(comparePositions(head, all[6].position)).to.be.at.least(0);
        const last = await store.readLast(2);
        expect(last.map((e) => (e.data as { i: number }).i)).to.deep.equal([5, 6]);
      });
    });

    it('keeps an event id given by the writer', async () => {
      const given = '0b3f8c8e-6f0a-4d57-9a3e-2f6b8a1c9d01';
      const res = await store.append([{ streamId: id('ids'), expected: 'no_stream', events: [{ type: 'I', data: {}, id: given }] }], meta);
      expect(res.events[0].id).to.equal(given);
      expect((await store.readStream(id('ids')))[0].id).to.equal(given);
    });

    describe('subscriptions', () => {
      it('delivers history first, then live events, each once and in order', async () => {
        for (let i = 0; i < 5; i++) await store.append([{ streamId: id('s'), expected: 'any', events: [ev('S', { i })] }], meta);
        const seen: number[] = [];
        const sub = store.subscribeAll((e) => {
          if (e.streamId === id('s')) seen.push((e.data as { i: number }).i);
        });
        try {
          await eventually(() => seen.length === 5, { what: 'catch-up', timeoutMs: 10_000 });
          for (let i = 5; i < 10; i++) await store.append([{ streamId: id('s'), expected: 'any', events: [ev('S', { i })] }], meta);
          await eventually(() => seen.length === 10, { what: 'live events', timeoutMs: 10_000 });
          expect(seen).to.deep.equal([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
        } finally {
          await sub.stop();
        }
      });

      it('resumes after a stop from the last handled position without repeats or gaps', async () => {
        for (let i = 0; i < 20; i++) await store.append([{ streamId: id('p'), expected: 'any', events: [ev('P', { i })] }], meta);
        const seen: number[] = [];
        let stopAfter = 8;
        let first!: ReturnType<EventStore['subscribeAll']>;
        const stoppedMidStream = new Promise<void>((resolve) => {
          first = store.subscribeAll(
            async (e) => {
              if (e.streamId !== id('p')) return;
              seen.push((e.data as { i: number }).i);
              if (--stopAfter === 0) resolve();
            },
            { batchSize: 3 },
          );
        });
        await stoppedMidStream;
        await first.stop();
        const checkpoint = first.position;
        const handledBeforeStop = seen.length;
        expect(handledBeforeStop).to.be.lessThan(20);
        const second = store.subscribeAll(
          (e) => {
            if (e.streamId === id('p')) seen.push((e.data as { i: number }).i);
          },
          { from: checkpoint },
        );
        try {
          // Barrier: one more event, delivered after every event before it; repeats would be in by then.
          await store.append([{ streamId: id('p'), expected: 'any', events: [ev('P', { i: 20 })] }], meta);
          await eventually(() => seen.includes(20), { what: 'resumed delivery', timeoutMs: 10_000 });
          expect(seen).to.deep.equal(Array.from({ length: 21 }, (_, i) => i));
        } finally {
          await second.stop();
        }
      });

      it('lets a reader racing concurrent writers see every event once, in order', async () => {
        // Small batches read while 16 writers append: every read meets writers in
        // flight, some of them committing behind others.
        const mine = new Set<string>();
        let from = await store.headPosition();
        let stop = false;
        const delivered: RecordedEvent[] = [];
        const reader = (async () => {
          while (!stop) {
            const batch = await store.readAll(from, 25);
            for (const e of batch) {
              delivered.push(e);
              from = e.position;
            }
          }
        })();
        await Promise.all(
          Array.from({ length: 16 }, async (_, w) => {
            for (let i = 0; i < 40; i++) {
              const res = await store.append([{ streamId: id(`race-${w}-${i % 3}`), expected: 'any', events: [ev('W', { w, i })] }], meta);
              mine.add(res.events[0].id);
            }
          }),
        );
        await eventually(async () => delivered.filter((e) => mine.has(e.id)).length >= mine.size, { what: 'every event', timeoutMs: 15_000 });
        stop = true;
        await reader;
        const ids = delivered.filter((e) => mine.has(e.id)).map((e) => e.id);
        expect(new Set(ids).size, 'no event twice').to.equal(ids.length);
        expect(ids.length).to.equal(640);
        for (let i = 1; i < delivered.length; i++) expect(comparePositions(delivered[i - 1].position, delivered[i].position)).to.equal(-1);
      });

      it('retries a failing handler from the same event', async () => {
        await store.append([{ streamId: id('f'), expected: 'any', events: [ev('F', { i: 0 }), ev('F', { i: 1 })] }], meta);
        const seen: number[] = [];
        let failed = false;
        const sub = store.subscribeAll(
          (e) => {
            if (e.streamId !== id('f')) return;
            const i = (e.data as { i: number }).i;
            if (i === 1 && !failed) {
              failed = true;
              throw new Error('transient');
            }
            seen.push(i);
          },
          { onError: () => {} },
        );
        try {
          await eventually(() => seen.length === 2, { what: 'retry', timeoutMs: 10_000 });
          expect(seen).to.deep.equal([0, 1]);
        } finally {
          await sub.stop();
        }
      });
    });
  });
}
