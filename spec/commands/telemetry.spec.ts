import { expect } from 'chai';
import { NodeQueue, recordApply, recordSnapshot, type TelemetryDeps } from '../../commands/telemetry.js';
import { foldNodeStatus, nodeStatusStream, type NodeStatusEvent } from '../../domain/telemetry/health.js';
import type { ApplyResult, BgpState, RuntimeSnapshot } from '../../domain/telemetry/reports.js';
import {
  WrongExpectedVersion,
  type EventMetadata,
  type EventStore,
  type StreamWrite,
  type WriteLock,
  type WriteSession,
} from '../../infra/eventstore/types.js';
import { currentNodeStatus } from '../../projections/node-status/queries.js';
import { applyResult, snapshot } from '../http/control/agent/telemetry-support.js';
import { createTestSystem, type TestSystem } from '../support/system.js';

const meta = { actor: 'spec' };

interface Spied {
  store: EventStore;
  /** Every `readStream` call: where it started and how many events it returned. */
  reads: { streamId: string; fromVersion: number; events: number }[];
  /** Appends the store refused because the stream had moved. */
  conflicts: number;
}

/**
 * The store with its reads counted; `beforeAppend` runs (once) just before the first
 * write goes ahead: before its writer lock is taken (stores with writer locks), else
 * before its append.
 */
function spied(store: EventStore, beforeAppend?: () => Promise<void>): Spied {
  const spy: Spied = { store, reads: [], conflicts: 0 };
  let hook = beforeAppend;
  const once = async () => {
    const run = hook;
    hook = undefined;
    await run?.();
  };
  const counted = async <T>(append: () => Promise<T>): Promise<T> => {
    try {
      return await append();
    } catch (err) {
      if (err instanceof WrongExpectedVersion) spy.conflicts += 1;
      throw err;
    }
  };
  spy.store = new Proxy(store, {
    get(target, prop) {
      if (prop === 'readStream') {
        return async (streamId: string, options: { fromVersion?: number } = {}) => {
          const events = await target.readStream(streamId, options);
          spy.reads.push({ streamId, fromVersion: options.fromVersion ?? 0, events: events.length });
          return events;
        };
      }
      if (prop === 'append') {
        return async (writes: readonly StreamWrite[], metadata: EventMetadata) => {
          await once();
          return counted(() => target.append(writes, metadata));
        };
      }
      if (prop === 'withWriteLocks' && target.withWriteLocks) {
        return (locks: readonly WriteLock[], work: (session: WriteSession) => Promise<unknown>) =>
          target.withWriteLocks!(locks, (session) =>
            work({
              ...session,
              tryLock: async (names) => {
                await once();
                return session.tryLock(names);
              },
              append: (writes, metadata) => counted(() => session.append(writes, metadata)),
            }),
          );
      }
      const value = Reflect.get(target, prop, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return spy;
}

/** captured_at of every snapshot here (spec/http/control/agent/telemetry-support.ts). */
const C = '2026-11-01T12:00:00.000Z';

describe('telemetry transitions (node-status streams)', function () {
  this.timeout(60_000);
  let sys: TestSystem;
  const deps = (store: EventStore = sys.store): TelemetryDeps => ({ pool: sys.pool, store, log: sys.log, background: sys.context.background });
  const snap = (nodeId: string, sessions?: Record<string, string>) => snapshot(nodeId, sessions) as RuntimeSnapshot;
  const transitions = async (nodeId: string) => (await sys.store.readStream(nodeStatusStream(nodeId))).map((e) => [e.type, e.data]);

  before(async () => {
    sys = await createTestSystem();
  });
  after(async () => sys?.close());

  it('decides a snapshot of a node with 2,000 recorded transitions without reading its history', async () => {
    const stream = nodeStatusStream('long');
    // History: degraded, then a session flapping 1,999 times; appended directly, 500 events per append.
    const history: NodeStatusEvent[] = [
      { type: 'NodeHealthChanged', data: { node_id: 'long', from: 'unknown', to: 'degraded', reasons: ['1 of 2 bgp sessions not established'] } },
    ];
    let p1: BgpState | 'unknown' = 'unknown';
    while (history.length < 2000) {
      const to: BgpState = p1 === 'active' ? 'established' : 'active';
      history.push({ type: 'BgpSessionStateChanged', data: { node_id: 'long', session: 'p1', from: p1, to } });
      p1 = to;
    }
    history.push({ type: 'BgpSessionStateChanged', data: { node_id: 'long', session: 'p2', from: 'unknown', to: 'established' } });
    for (let i = 0; i < history.length; i += 500) {
      await sys.store.append([{ streamId: stream, expected: i === 0 ? 'no_stream' : i - 1, events: history.slice(i, i + 500) }], meta);
    }
    expect(p1).to.equal('active');
    const row = await currentNodeStatus(sys.pool, 'long');
    expect(row?.version).to.equal(2000);
    expect(row?.state).to.deep.equal(foldNodeStatus(history));

    const spy = spied(sys.store);
    await recordSnapshot(deps(spy.store), snap('long'), meta, sys.clock.now());
    await sys.context.background.drain();

    // The row stands at the stream's version: the stream is not read at all.
    expect(spy.reads).to.deep.equal([]);
    // The decisions still start from the end of the history.
    expect((await transitions('long')).slice(2001)).to.deep.equal([
      ['NodeHealthChanged', { node_id: 'long', from: 'degraded', to: 'ok', reasons: [] }],
      ['BgpSessionStateChanged', { node_id: 'long', session: 'p1', from: 'active', to: 'established', captured_at: C }],
    ]);
    expect((await currentNodeStatus(sys.pool, 'long'))?.version).to.equal(2002);
  });

  it('takes no writer lock and appends nothing for a snapshot that changes nothing the stream recorded', async () => {
    await recordSnapshot(deps(), snap('quiet'), meta, sys.clock.now());
    const version = await sys.store.streamVersion(nodeStatusStream('quiet'));
    expect(version).to.be.greaterThan(-1); // the first snapshot recorded its transitions
    let locked = 0;
    const counting = new Proxy(sys.store, {
      get(target, prop) {
        if (prop === 'withWriteLocks') return (...args: Parameters<NonNullable<EventStore['withWriteLocks']>>) => (locked++, target.withWriteLocks!(...args));
        const value = Reflect.get(target, prop, target);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    sys.clock.advance(60_000);
    await recordSnapshot(deps(counting), snap('quiet'), meta, sys.clock.now());
    expect(locked).to.equal(0);
    expect(await sys.store.streamVersion(nodeStatusStream('quiet'))).to.equal(version);
    // A change goes through the locked path and is recorded.
    sys.clock.advance(60_000);
    await recordSnapshot(deps(counting), snap('quiet', { p1: 'established', p2: 'idle' }), meta, sys.clock.now());
    expect(locked).to.equal(1);
    expect(await sys.store.streamVersion(nodeStatusStream('quiet'))).to.be.greaterThan(version);
  });

  it('appends the health and the session transitions of one snapshot together, in one transaction', async () => {
    await recordSnapshot(deps(), snap('once'), meta, sys.clock.now());
    sys.clock.advance(30_000);
    await recordSnapshot(deps(), snap('once', { p1: 'established', p2: 'idle' }), meta, sys.clock.now());
    const events = await sys.store.readStream(nodeStatusStream('once'));
    expect(events.map((e) => e.type)).to.deep.equal([
      'NodeHealthChanged',
      'BgpSessionStateChanged',
      'BgpSessionStateChanged',
      'NodeHealthChanged',
      'BgpSessionStateChanged',
    ]);
    // Read before the background drained: all of them were appended before recordSnapshot answered.
    expect(new Set(events.slice(0, 3).map((e) => e.position.tx)).size).to.equal(1);
    expect(new Set(events.slice(3).map((e) => e.position.tx)).size).to.equal(1);
    expect(events[3].position.tx).to.not.equal(events[0].position.tx);
    await sys.context.background.drain();
  });

  it('re-decides on the moved stream when another report appended first, so a transition is recorded once', async () => {
    // Race made deterministic: the first report has read the row and decided; before its
    // append, a second report of the same node runs to the end.
    const spy = spied(sys.store, async () => {
      await recordSnapshot(deps(), snap('race'), meta, sys.clock.now());
      await sys.context.background.drain();
    });
    await recordSnapshot(deps(spy.store), snap('race'), meta, sys.clock.now());
    await sys.context.background.drain();

    expect(spy.conflicts).to.equal(1);
    expect(await transitions('race')).to.deep.equal([
      ['NodeHealthChanged', { node_id: 'race', from: 'unknown', to: 'ok', reasons: [] }],
      ['BgpSessionStateChanged', { node_id: 'race', session: 'p1', from: 'unknown', to: 'established', captured_at: C }],
      ['BgpSessionStateChanged', { node_id: 'race', session: 'p2', from: 'unknown', to: 'established', captured_at: C }],
    ]);
  });

  it('records each transition exactly once when one node sends reports concurrently', async () => {
    const at = () => sys.clock.now();
    await Promise.all(Array.from({ length: 8 }, () => recordSnapshot(deps(), snap('busy'), meta, at())));
    await sys.context.background.drain();
    sys.clock.advance(30_000);
    await Promise.all([
      ...Array.from({ length: 6 }, () => recordSnapshot(deps(), snap('busy', { p1: 'established', p2: 'active' }), meta, at())),
      recordApply(deps(), applyResult('busy', 'failed', 2) as ApplyResult, meta, at()),
      recordApply(deps(), applyResult('busy', 'failed', 2) as ApplyResult, meta, at()),
    ]);
    await sys.context.background.drain();

    const all = (await transitions('busy')) as [string, Record<string, unknown>][];
    expect(all.slice(0, 3)).to.deep.equal([
      ['NodeHealthChanged', { node_id: 'busy', from: 'unknown', to: 'ok', reasons: [] }],
      ['BgpSessionStateChanged', { node_id: 'busy', session: 'p1', from: 'unknown', to: 'established', captured_at: C }],
      ['BgpSessionStateChanged', { node_id: 'busy', session: 'p2', from: 'unknown', to: 'established', captured_at: C }],
    ]);
    // Every report of the second round derives degraded (which reasons depends on which
    // upsert came first); an apply result may record it before any snapshot: order free.
    const later = all.slice(3);
    expect(later).to.have.length(2);
    expect(later.filter(([type]) => type === 'NodeHealthChanged').map(([, d]) => [d.from, d.to])).to.deep.equal([['ok', 'degraded']]);
    expect(later.filter(([type]) => type === 'BgpSessionStateChanged')).to.deep.equal([
      ['BgpSessionStateChanged', { node_id: 'busy', session: 'p2', from: 'established', to: 'active', captured_at: C }],
    ]);
    const row = await currentNodeStatus(sys.pool, 'busy');
    expect(row?.state).to.deep.equal(foldNodeStatus((await sys.store.readStream(nodeStatusStream('busy'))) as unknown as NodeStatusEvent[]));
  });

  it('compares the snapshots of one node in arrival order with a NodeQueue: the last one posted is the recorded state', async () => {
    const order = new NodeQueue();
    const states = ['established', 'idle', 'active', 'established', 'idle', 'connect', 'established'];
    await Promise.all(states.map((p1) => recordSnapshot({ ...deps(), snapshotOrder: order }, snap('ordered', { p1 }), meta, sys.clock.now())));
    await sys.context.background.drain();
    const changes = ((await transitions('ordered')) as [string, { from: string; to: string }][])
      .filter(([type]) => type === 'BgpSessionStateChanged')
      .map(([, d]) => `${d.from}>${d.to}`);
    expect(changes).to.deep.equal([
      'unknown>established',
      'established>idle',
      'idle>active',
      'active>established',
      'established>idle',
      'idle>connect',
      'connect>established',
    ]);
  });
});
