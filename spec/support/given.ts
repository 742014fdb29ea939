import { expect } from 'chai';
import type { Decider, DomainEvent } from '../../domain/decider.js';
import { fold } from '../../domain/decider.js';

/**
 * Decider tests that read as given / when / then:
 *
 *   given(nodeDecider, [NodeCreated(...)]).when(CreatePeering(...)).then([PeeringCreated(...)])
 *   given(nodeDecider, []).when(...).thenThrows(Conflict, /already exists/)
 */
export function given<Command, Event extends DomainEvent, State>(decider: Decider<Command, Event, State>, history: readonly Event[]) {
  return {
    when(command: Command) {
      const run = () => decider.decide(command, fold(decider, history));
      return {
        then(expected: readonly Event[]): Event[] {
          const events = run();
          expect(events).to.deep.equal(expected);
          return events;
        },
        thenState(check: (state: State, events: Event[]) => void): void {
          const events = run();
          check(events.reduce(decider.evolve, fold(decider, history)), events);
        },
        thenThrows(kind: new (...args: never[]) => Error, message?: RegExp | string): Error {
          let caught: unknown;
          try {
            run();
          } catch (err) {
            caught = err;
          }
          expect(caught, 'decide should throw').to.be.instanceOf(kind);
          if (message instanceof RegExp) expect((caught as Error).message).to.match(message);
          else if (message !== undefined) expect((caught as Error).message).to.equal(message);
          return caught as Error;
        },
      };
    },
  };
}
