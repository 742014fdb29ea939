import { sha256Hex } from '../../domain/sha256.js';
import { WrongExpectedVersion, type EventStore } from '../eventstore/types.js';

/**
 * Where spent tickets are remembered, shared by every instance.
 *
 * `spend(ticketId, expiresAt)`: records the ticket as used and answers true, or
 * answers false when any instance has recorded it before. Atomic: two instances
 * spending one ticket at once get one true.
 */
export interface SpentTickets {
  spend(ticketId: string, expiresAt: Date): Promise<boolean>;
}

/**
 * Spent tickets as `captcha-ticket-<sha256>` streams appended with `no_stream`:
 * the event store's expected-version check is what makes a second spend fail,
 * on every instance and on both store backends.
 */
export function eventStoreSpentTickets(store: EventStore): SpentTickets {
  return {
    async spend(ticketId, expiresAt) {
      const streamId = `captcha-ticket-${sha256Hex(ticketId)}`;
      try {
        await store.append([{ streamId, expected: 'no_stream', events: [{ type: 'CaptchaTicketSpent', data: { expires_at: expiresAt.toISOString() } }] }], {
          actor: 'captcha',
        });
        return true;
      } catch (err) {
        if (err instanceof WrongExpectedVersion) return false;
        throw err;
      }
    },
  };
}
