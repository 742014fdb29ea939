import { expect } from 'chai';
import { fold } from '../../domain/decider.js';
import { Conflict, IllegalState, NotFound } from '../../domain/errors.js';
import { counter } from '../fixtures/counter.js';
import { given } from '../support/given.js';

const now = new Date('2026-11-01T12:00:00Z');
const opened = { type: 'CounterOpened', data: { name: 'c', at: now.toISOString() } } as const;

describe('decider toolkit', () => {
  it('decides the first event of a new aggregate from the empty state', () => {
    given(counter, []).when({ type: 'Open', name: 'c', metadata: { now } }).then([opened]);
  });

  it('takes time from the command, so the same command decides the same events', () => {
    const later = new Date('2027-01-01T00:00:00Z');
    given(counter, [])
      .when({ type: 'Open', name: 'c', metadata: { now: later } })
      .then([{ type: 'CounterOpened', data: { name: 'c', at: later.toISOString() } }]);
  });

  it('folds history before deciding', () => {
    given(counter, [opened, { type: 'CounterIncremented', data: { by: 2, value: 2 } }])
      .when({ type: 'Increment', by: 3 })
      .then([{ type: 'CounterIncremented', data: { by: 3, value: 5 } }]);
  });

  it('throws typed errors for illegal commands', () => {
    given(counter, [opened])
      .when({ type: 'Open', name: 'c', metadata: { now } })
      .thenThrows(Conflict, /already exists/);
    given(counter, []).when({ type: 'Increment', by: 1 }).thenThrows(NotFound, 'unknown counter');
    given(counter, [opened, { type: 'CounterClosed', data: { at: now.toISOString() } }])
      .when({ type: 'Increment', by: 1 })
      .thenThrows(IllegalState, 'counter c is closed');
  });

  it('returns no events for a command that changes nothing', () => {
    given(counter, []).when({ type: 'Close', metadata: { now } }).then([]);
  });

  it('exposes the state after the decided events', () => {
    given(counter, [opened])
      .when({ type: 'Increment', by: 4 })
      .thenState((state) => {
        expect(state).to.deep.equal({ status: 'Open', name: 'c', value: 4 });
      });
  });

  it('folds an empty history to the initial state', () => {
    expect(fold(counter, [])).to.deep.equal({ status: 'Empty' });
  });
});
