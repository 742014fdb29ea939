import { expect } from 'chai';
import pg from 'pg';
import { PgListener } from '../../../infra/db/listener.js';
import { PgEventStore } from '../../../infra/eventstore/postgres/store.js';
import { comparePositions, formatPosition, type GlobalPosition } from '../../../infra/eventstore/types.js';
import { createLogger } from '../../../infra/logger.js';
import { useStoreDatabase } from '../../support/database.js';
import { eventually } from '../../support/wait.js';

const log = createLogger('silent');
const meta = { actor: 'races' };
// Timed pauses, each with its reason where it is used.
const sleep = (ms: number) => new Promise<void>((res) => setTimeout(res, ms));
const APPEND_SQL = `SELECT * FROM event_store_append($1::text[], $2::text[], $3::int[], ARRAY[NULL]::uuid[], ARRAY['R'], convert_to('{}', 'UTF8'), ARRAY[1], ARRAY[2], '{"actor":"races"}'::jsonb)`;

/** Every committed event in the global order, straight from the table (no horizon). */
async function committed(pool: pg.Pool, prefix: string): Promise<string[]> {
  const { rows } = await pool.query(
    `SELECT tx_id::text || '/' || position::text AS p FROM events WHERE stream_id LIKE $1 ORDER BY events.tx_id, events.position`,
    [`${prefix}%`],
  );
  return rows.map((r) => r.p as string);
}

describe('PostgreSQL event store races', function () {
  this.timeout(20_000);
  const t = useStoreDatabase(40);

  it('readers with tiny batches see every committed event exactly once, in order, under mixed concurrent writers', async () => {
    const prefix = 'mix-';
    const store = new PgEventStore({ pool: t.pool, log });
    const inlineStore = new PgEventStore({ pool: t.pool, log });
    // Inline work that keeps the append transaction open a random while, and sometimes aborts it.
    inlineStore.onAppend(async (tx, events) => {
      await tx.query('SELECT pg_sleep($1)', [Math.random() * 0.01]);
      if (events.some((e) => (e.data as { abort?: boolean }).abort)) throw new Error('inline abort');
    });
    const start = await store.settledHead();
    let stop = false;
    const errors: unknown[] = [];
    const writers: Promise<void>[] = [];
    // Autocommitted multi-stream appends over overlapping streams, listed in different orders.
    for (let w = 0; w < 5; w++) {
      writers.push(
        (async () => {
          for (let i = 0; !stop; i++) {
            const streams = [`${prefix}s${(w + i) % 4}`, `${prefix}s${(w + i + 1) % 4}`];
            if (i % 2) streams.reverse();
            await store.append(
              streams.map((streamId) => ({ streamId, expected: 'any' as const, events: [{ type: 'R', data: { w, i } }] })),
              meta,
            );
          }
        })().catch((e) => void errors.push(e)),
      );
    }
    // Inline-transaction appends, some aborted by their handler.
    for (let w = 0; w < 4; w++) {
      writers.push(
        (async () => {
          for (let i = 0; !stop; i++) {
            await inlineStore
              .append([{ streamId: `${prefix}i${w}`, expected: 'any', events: [{ type: 'R', data: { abort: i % 5 === 0 } }] }], meta)
              .catch((e) => {
                if (e.message !== 'inline abort') throw e;
              });
          }
        })().catch((e) => void errors.push(e)),
      );
    }
    // Hand-held transactions: BEGIN, append, pause, COMMIT / ROLLBACK / ROLLBACK TO SAVEPOINT, or killed.
    for (let w = 0; w < 4; w++) {
      writers.push(
        (async () => {
          for (let i = 0; !stop; i++) {
            const c = new pg.Client({ connectionString: t.db.url });
            c.on('error', () => {});
            await c.connect();
            try {
              await c.query('BEGIN');
              const kind = i % 4;
              if (kind === 1) await c.query('SAVEPOINT s');
              await c.query(APPEND_SQL, [[`${prefix}h${w}`], ['any'], [1]]);
              await sleep(Math.random() * 15); // a transaction left open a random while, as a slow writer would
              if (kind === 1) {
                await c.query('ROLLBACK TO SAVEPOINT s');
                await c.query('COMMIT');
              } else if (kind === 2) {
                await c.query('ROLLBACK');
              } else if (kind === 3) {
                await t.pool.query('SELECT pg_terminate_backend($1)', [(c as unknown as { processID: number }).processID]);
              } else {
                await c.query('COMMIT');
              }
            } catch {
              // killed on purpose
            } finally {
              await c.end().catch(() => {});
            }
          }
        })().catch((e) => void errors.push(e)),
      );
    }
    // Readers with small batches.
    const seen: string[][] = [];
    const readers: Promise<void>[] = [];
    let drained = false;
    for (let r = 0; r < 4; r++) {
      const mine: string[] = [];
      seen.push(mine);
      readers.push(
        (async () => {
          let from: GlobalPosition = start;
          for (;;) {
            const finalPass = drained;
            const batch = await store.readAll(from, 1 + r * 2);
            for (const e of batch) {
              expect(comparePositions(e.position, from)).to.equal(1);
              if (e.streamId.startsWith(prefix)) mine.push(formatPosition(e.position));
              from = e.position;
            }
            if (batch.length === 0 && finalPass) return;
            if (batch.length === 0) await sleep(1); // a reader polling in a tight loop
          }
        })().catch((e) => void errors.push(e)),
      );
    }
    await sleep(3000); // how long the writers and readers race
    stop = true;
    await Promise.all(writers);
    await store.settledHead();
    drained = true;
    await Promise.all(readers);
    expect(errors).to.deep.equal([]);
    const truth = (await committed(t.pool, prefix)).filter((p) => comparePositions(parsePos(p), start) > 0);
    expect(truth.length).to.be.greaterThan(100);
    for (const mine of seen) expect(mine).to.deep.equal(truth);
  });
});

describe('PostgreSQL event store: acknowledgements', function () {
  this.timeout(10_000);
  const t = useStoreDatabase(10);

  it('does not acknowledge an append whose transaction PostgreSQL rolled back at COMMIT', async () => {
    // Race: an inline handler that catches a failed statement (say, a unique
    // violation from a concurrent writer) leaves the transaction aborted; COMMIT
    // then answers ROLLBACK without an error, and the append reported success.
    const store = new PgEventStore({ pool: t.pool, log });
    store.onAppend(async (tx) => {
      await tx.query('SELECT 1/0').catch(() => {});
    });
    const outcome = await store.append([{ streamId: 'ack-1', expected: 'no_stream', events: [{ type: 'A', data: {} }] }], meta).then(
      (r) => ({ acknowledged: r.events.length }),
      (e: Error) => ({ refused: e.message }),
    );
    const stored = (await store.readStream('ack-1')).length;
    expect({ acknowledged: 'acknowledged' in outcome, stored }).to.deep.equal({ acknowledged: stored > 0, stored: 0 });
    expect(outcome).to.have.property('refused');
  });
});

describe('PostgreSQL event store: guards on streams that do not exist', function () {
  this.timeout(10_000);
  const t = useStoreDatabase(10);

  it('does not let two appends each create a stream on condition that the other one does not exist', async () => {
    // Race (write skew): an empty write expecting no_stream checked that no row was
    // visible and locked nothing, so it passed while a creator of that stream was
    // still uncommitted, and both conditional creations committed.
    const store = new PgEventStore({ pool: t.pool, log });
    let release!: () => void;
    const held = new Promise<void>((res) => (release = res));
    let holding = false;
    // Keeps A's transaction open after its write, as slow inline work would.
    store.onAppend(async () => {
      holding = true;
      await held;
    }, ['HeldOpen']);
    const a = store
      .append(
        [
          { streamId: 'skew-x', expected: 'no_stream', events: [{ type: 'HeldOpen', data: {} }] },
          { streamId: 'skew-y', expected: 'no_stream', events: [] },
        ],
        meta,
      )
      .then(
        () => 'ok',
        (e: Error) => e.name,
      );
    await eventually(() => holding, { what: "A's transaction held open" });
    const b = store
      .append(
        [
          { streamId: 'skew-y', expected: 'no_stream', events: [{ type: 'Plain', data: {} }] },
          { streamId: 'skew-x', expected: 'no_stream', events: [] },
        ],
        meta,
      )
      .then(
        () => 'ok',
        (e: Error) => e.name,
      );
    // B ends (refused) or waits for A's lock; either way it has made its check while A is open.
    let bDone = false;
    void b.then(() => (bDone = true));
    await eventually(
      async () => bDone || (await t.pool.query(`SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`)).rowCount! > 0,
      {
        what: 'B checked while A is open',
      },
    );
    release();
    const outcomes = [await a, await b];
    const streams = (await t.pool.query(`SELECT stream_id FROM streams WHERE stream_id LIKE 'skew-%' ORDER BY 1`)).rows.map((r) => r.stream_id);
    expect({ outcomes, streams }).to.deep.equal({ outcomes: ['ok', 'WrongExpectedVersion'], streams: ['skew-x'] });
  });
});

describe('PostgreSQL event store: stopping', function () {
  this.timeout(10_000);
  const t = useStoreDatabase(10);

  it('leaves no LISTEN connection behind when the listener closes while it is still connecting', async () => {
    // Race: watch() starts LISTEN without waiting (a runtime's start(), a
    // subscription); a close() before the connection was up found no client to
    // end, and the connection came up afterwards and stayed open for good,
    // keeping the process alive.
    const listener = new PgListener(t.db.url, log);
    const store = new PgEventStore({ pool: t.pool, listener, log });
    const unwatch = store.watch(() => {});
    unwatch();
    await listener.close();
    // Barrier: the connection attempt that watch() started is over (close() does not wait for it).
    await (listener as unknown as { connecting?: Promise<void> }).connecting;
    const { rows } = await t.pool.query(
      `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'dn42-control:listener'`,
    );
    expect(rows[0].n, 'LISTEN connections left open').to.equal(0);
  });

  it('stops a subscription promptly while it backs off after failures', async () => {
    // Race: stop() during the retry backoff waited out the whole pause (up to 30 s),
    // and its timer kept the process alive that long.
    const store = new PgEventStore({ pool: t.pool, log, pollIntervalMs: 50 });
    await store.append([{ streamId: 'stop-1', expected: 'any', events: [{ type: 'S', data: {} }] }], meta);
    let failures = 0;
    const sub = store.subscribeAll(
      () => {
        throw new Error('handler keeps failing');
      },
      { onError: () => void (failures += 1) },
    );
    await eventually(() => failures >= 4, { what: 'four failures' });
    // Now in a 1.6 s backoff.
    const started = Date.now();
    await sub.stop();
    expect(Date.now() - started, 'ms stop() took').to.be.below(400);
  });
});

function parsePos(text: string): GlobalPosition {
  const [tx, pos] = text.split('/');
  return { tx: BigInt(tx), pos: BigInt(pos) };
}
