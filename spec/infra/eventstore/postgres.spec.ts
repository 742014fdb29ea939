import { expect } from 'chai';
import pg from 'pg';
import { PgListener } from '../../../infra/db/listener.js';
import { PgEventStore } from '../../../infra/eventstore/postgres/store.js';
import { readAll as readAllSql } from '../../../infra/eventstore/postgres/sql.js';
import { START, type RecordedEvent } from '../../../infra/eventstore/types.js';
import { createLogger } from '../../../infra/logger.js';
import { createTestDatabase, useStoreDatabase } from '../../support/database.js';
import { eventually } from '../../support/wait.js';
import { describeEventStoreContract } from './contract.js';

const log = createLogger('silent');

describe('PostgreSQL event store', () => {
  const t = useStoreDatabase(20);

  describeEventStoreContract('postgres', async () => {
    const listener = new PgListener(t.db.url, log);
    const store = new PgEventStore({ pool: t.pool, listener, log, pollIntervalMs: 100 });
    return { store, close: () => listener.close() };
  });

  describe('global order under concurrent transactions', () => {
    /**
     * The race: transaction A takes a position first but commits last. A reader
     * that went by position alone would pass A's slot while A is in flight and
     * skip its event forever once A commits.
     */
    it('never skips an event whose transaction commits after a later position', async () => {
      const listener = new PgListener(t.db.url, log);
      const store = new PgEventStore({ pool: t.pool, listener, log, pollIntervalMs: 50 });
      const a = new pg.Client({ connectionString: t.db.url });
      const b = new pg.Client({ connectionString: t.db.url });
      await a.connect();
      await b.connect();
      const seen: string[] = [];
      const sub = store.subscribeAll((e: RecordedEvent) => {
        if (e.streamId.startsWith('late-')) seen.push(e.streamId);
      });
      try {
        const insert = `INSERT INTO events (stream_id, version, type, data, metadata) VALUES ($1, 0, 'T', '{}', '{"actor":"spec"}') RETURNING position`;
        await a.query('BEGIN');
        const posA = Number((await a.query(insert, ['late-a'])).rows[0].position);
        await b.query('BEGIN');
        const posB = Number((await b.query(insert, ['late-b'])).rows[0].position);
        expect(posA).to.be.lessThan(posB);
        await b.query('COMMIT');
        // B is committed but A (earlier position) is still open: the reader must hold back,
        // however long A stays open (time passes on purpose: the hold-back is no timeout).
        await new Promise((r) => setTimeout(r, 300));
        const visibleWhileAOpen = (await store.readAll(START, 1000)).filter((e) => e.streamId.startsWith('late-')).map((e) => e.streamId);
        expect(visibleWhileAOpen).to.deep.equal([]);
        await a.query('COMMIT');
        await eventually(() => seen.length >= 2, { what: 'both events' });
        expect([...seen].sort()).to.deep.equal(['late-a', 'late-b']);
      } finally {
        await sub.stop();
        await a.end();
        await b.end();
        await listener.close();
      }
    });

    it('refuses events from a transaction that took its id before entering the writer protocol', async () => {
      // Race guard: such a transaction could have taken its id before a reader
      // computed its horizon, then slip events in below what the reader passed.
      const b = new pg.Client({ connectionString: t.db.url });
      await b.connect();
      try {
        await b.query('BEGIN');
        await b.query('SELECT pg_current_xact_id()');
        const err = await b.query(`INSERT INTO events (stream_id, version, type, data, metadata) VALUES ('xid-b', 0, 'T', '{}', '{}')`).catch((e) => e);
        expect(err.message).to.equal('event store writes must come first in their transaction');
        await b.query('ROLLBACK');
      } finally {
        await b.end();
      }
    });

    it('is not held back by a transaction that writes no events, here or in another database', async () => {
      const store = new PgEventStore({ pool: t.pool, log });
      const other = await createTestDatabase();
      const idleHere = new pg.Client({ connectionString: t.db.url });
      const idleThere = new pg.Client({ connectionString: other.url });
      await idleHere.connect();
      await idleThere.connect();
      try {
        for (const c of [idleHere, idleThere]) {
          await c.query('BEGIN');
          await c.query('SELECT pg_current_xact_id()');
        }
        const head = await store.headPosition();
        await store.append([{ streamId: 'unblocked-1', expected: 'no_stream', events: [{ type: 'U', data: {} }] }], { actor: 'spec' });
        const read = await store.readAll(head, 100);
        expect(read.map((e) => e.streamId)).to.deep.equal(['unblocked-1']);
      } finally {
        await idleHere.end();
        await idleThere.end();
        await other.drop();
      }
    });

    it('holds readers below an event writer that is still running, and only below it', async () => {
      const store = new PgEventStore({ pool: t.pool, log });
      const before = await store.headPosition();
      await store.append([{ streamId: 'held-0', expected: 'no_stream', events: [{ type: 'H', data: {} }] }], { actor: 'spec' });
      const open = new pg.Client({ connectionString: t.db.url });
      await open.connect();
      try {
        await open.query('BEGIN');
        await open.query(
          `SELECT * FROM event_store_append(ARRAY['held-1'], ARRAY['any'], ARRAY[1], ARRAY[NULL]::uuid[], ARRAY['H'], convert_to('{}', 'UTF8'), ARRAY[1], ARRAY[2], '{}'::jsonb)`,
        );
        await store.append([{ streamId: 'held-2', expected: 'no_stream', events: [{ type: 'H', data: {} }] }], { actor: 'spec' });
        const mid = (await store.readAll(before, 100)).map((e) => e.streamId);
        expect(mid).to.deep.equal(['held-0']);
        await open.query('COMMIT');
        const after = (await store.readAll(before, 100)).map((e) => e.streamId);
        expect(after).to.deep.equal(['held-0', 'held-1', 'held-2']);
      } finally {
        await open.end();
      }
    });

    it('orders transaction ids as numbers, not as text, across a power of ten', async () => {
      // Old, finished transaction ids: 99 sorts after 100 as text but before it as a number.
      const insert = `INSERT INTO events (tx_id, stream_id, version, type, data, metadata) VALUES ($1::text::xid8, $2, $3, 'T', '{}', '{"actor":"spec"}')`;
      await t.pool.query(insert, ['99', 'digits-a', 0]);
      await t.pool.query(insert, ['99', 'digits-a', 1]);
      await t.pool.query(insert, ['100', 'digits-b', 0]);
      const store = new PgEventStore({ pool: t.pool, log });
      const seen: string[] = [];
      let from = START;
      for (;;) {
        const [next] = await store.readAll(from, 1);
        if (!next || !next.streamId.startsWith('digits-')) break;
        seen.push(`${next.streamId}@${next.position.tx}`);
        from = next.position;
      }
      expect(seen).to.deep.equal(['digits-a@99', 'digits-a@99', 'digits-b@100']);
      const plan = (await t.pool.query(`EXPLAIN ${readAllSql}`, ['0', '0', 1000, '9999999999'])).rows.map((r) => r['QUERY PLAN']).join('\n');
      expect(plan).not.to.match(/Sort Key: .*::text/);
      await t.pool.query(`DELETE FROM events WHERE stream_id LIKE 'digits-%'`);
    });

    it('wakes a live subscriber by NOTIFY well before its poll interval', async () => {
      const listener = new PgListener(t.db.url, log);
      const store = new PgEventStore({ pool: t.pool, listener, log, pollIntervalMs: 60_000 });
      // A second store stands for another process: only NOTIFY can carry its append here.
      const writer = new PgEventStore({ pool: t.pool, log });
      await listener.listen('dn42_events');
      const seen: string[] = [];
      const sub = store.subscribeAll(
        (e) => {
          if (e.streamId === 'notify-1') seen.push(e.type);
        },
        { from: await store.headPosition() },
      );
      try {
        await new Promise((r) => setTimeout(r, 200)); // the subscription's first (empty) read is over: only NOTIFY can bring what follows
        await writer.append([{ streamId: 'notify-1', expected: 'any', events: [{ type: 'N', data: {} }] }], { actor: 'spec' });
        await eventually(() => seen.length >= 1, { what: 'the event' });
        expect(seen).to.deep.equal(['N']);
      } finally {
        await sub.stop();
        await listener.close();
      }
    });
  });

  it('runs inline handlers inside the append transaction, rolling back both on failure', async () => {
    const store = new PgEventStore({ pool: t.pool, log });
    await t.pool.query('CREATE TABLE IF NOT EXISTS inline_probe (stream_id text, version int)');
    store.onAppend(async (tx, events) => {
      for (const e of events) {
        if (e.type === 'Boom') throw new Error('inline failure');
        await tx.query('INSERT INTO inline_probe VALUES ($1, $2)', [e.streamId, e.version]);
      }
    });
    await store.append([{ streamId: 'inline-1', expected: 'no_stream', events: [{ type: 'Ok', data: {} }] }], { actor: 'spec' });
    const err = await store
      .append(
        [
          {
            streamId: 'inline-2',
            expected: 'no_stream',
            events: [
              { type: 'Ok', data: {} },
              { type: 'Boom', data: {} },
            ],
          },
        ],
        { actor: 'spec' },
      )
      .catch((e) => e);
    expect(err.message).to.equal('inline failure');
    expect((await t.pool.query('SELECT stream_id FROM inline_probe ORDER BY stream_id')).rows).to.deep.equal([{ stream_id: 'inline-1' }]);
    expect(await store.readStream('inline-2')).to.deep.equal([]);
    const stream = await t.pool.query(`SELECT 1 FROM streams WHERE stream_id = 'inline-2'`);
    expect(stream.rowCount).to.equal(0);
  });
});
