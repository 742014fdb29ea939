/**
 * A child process for spec/infra/eventstore/crash.spec.ts: appends to the event
 * store of DATABASE_URL in a loop, several appends in flight at once, and prints
 * one line per acknowledged append (after `append` resolved):
 *
 *   ack <appendId> <single|multi> <stream>[,<stream>...]
 *
 * It runs until killed. Single appends write two events to one stream; multi
 * appends write one event to each of three streams. Every event carries its
 * append's id, so the parent can tell whole appends from partial ones.
 */
import { createPool } from '../../infra/db/pool.js';
import { PgEventStore } from '../../infra/eventstore/postgres/store.js';
import { createLogger } from '../../infra/logger.js';

const url = process.env.DATABASE_URL;
const run = process.env.BURST_RUN ?? 'r';
const workers = Number(process.env.BURST_WORKERS ?? '6');
if (!url) throw new Error('DATABASE_URL is required');

const pool = createPool(url, workers + 2);
const store = new PgEventStore({ pool, log: createLogger('silent') });

let next = 0;

async function worker(): Promise<void> {
  for (;;) {
    const i = next++;
    const appendId = `${run}-${i}`;
    const metadata = { actor: 'burst', correlationId: appendId };
    if (i % 2 === 0) {
      // Few streams, so concurrent appends contend for the same stream rows.
      const streamId = `single-${i % 3}`;
      await store.append([{ streamId, expected: 'any', events: [0, 1].map((part) => ({ type: 'BurstSingle', data: { appendId, part } })) }], metadata);
      process.stdout.write(`ack ${appendId} single ${streamId}\n`);
    } else {
      const k = i % 4;
      // Listed out of order on purpose: the store sorts them before locking.
      const streams = [`multi-c-${k}`, `multi-a-${k}`, `multi-b-${(k + 1) % 4}`];
      await store.append(
        streams.map((streamId) => ({ streamId, expected: 'any' as const, events: [{ type: 'BurstMulti', data: { appendId, streams } }] })),
        metadata,
      );
      process.stdout.write(`ack ${appendId} multi ${streams.join(',')}\n`);
    }
  }
}

process.stdout.write('ready\n');
await Promise.all(Array.from({ length: workers }, () => worker()));
