import { expect } from 'chai';
import { Backoff, sleep, WEBSOCKET_BACKOFF } from '../../../agent/backoff.js';

describe('agent: reconnect backoff', () => {
  it('doubles from 1 s to the 30 s cap, never above it, and starts over after a reset', () => {
    const none = new Backoff(WEBSOCKET_BACKOFF, () => 0);
    expect(Array.from({ length: 8 }, () => none.next())).to.deep.equal([1000, 2000, 4000, 8000, 16000, 30000, 30000, 30000]);
    none.reset();
    expect(none.next()).to.equal(1000);
    const most = new Backoff(WEBSOCKET_BACKOFF, () => 0.999999);
    expect(Array.from({ length: 7 }, () => most.next())).to.deep.equal([1250, 2500, 5000, 10000, 20000, 30000, 30000]);
  });

  it('spreads agents that lost the server together (jitter)', () => {
    const delays = new Set(Array.from({ length: 50 }, () => new Backoff().next()));
    expect(delays.size).to.be.greaterThan(10);
    for (const d of delays) expect(d).to.be.within(1000, 1250);
  });

  it('sleeps until aborted, answering whether the time ran out', async () => {
    expect(await sleep(5)).to.equal(true);
    const abort = new AbortController();
    const started = Date.now();
    const waiting = sleep(10_000, abort.signal);
    abort.abort();
    expect(await waiting).to.equal(false);
    expect(Date.now() - started).to.be.lessThan(1000);
  });
});
