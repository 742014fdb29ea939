import { expect } from 'chai';
import { recordAudit } from '../../commands/audit.js';
import { PgListener } from '../../infra/db/listener.js';
import { migrate } from '../../infra/db/migrate.js';
import { createPool } from '../../infra/db/pool.js';
import { PgEventStore } from '../../infra/eventstore/postgres/store.js';
import { formatPosition } from '../../infra/eventstore/types.js';
import { auditLogProjection } from '../../projections/audit-log/projection.js';
import type { Projection } from '../../projections/runtime/projection.js';
import { ProjectionRuntime } from '../../projections/runtime/runtime.js';
import { appendCounted, counterProjection, type CounterOptions } from '../fixtures/counter-projection/projection.js';
import { createTestSystem, type TestSystem } from '../support/system.js';
import { tableRows } from '../support/tables.js';
import { eventually } from '../support/wait.js';

// Timed pauses, each with its reason where it is used.
const sleep = (ms: number) => new Promise((res) => setTimeout(res, ms));

async function counted(system: TestSystem): Promise<number> {
  const { rows } = await system.pool.query('SELECT count(*)::int AS n FROM test_counter_applied');
  return rows[0].n;
}

/** Every Counted event is in the read model exactly once, and the totals agree with the events. */
async function expectExactlyOnce(system: TestSystem): Promise<void> {
  // Straight from the table: readAll would leave out events committed behind a still-running transaction.
  const events = (
    await system.pool.query<{ position: string; stream_id: string; data: { value: number } }>(
      `SELECT position::text AS position, stream_id, data FROM events WHERE type = 'Counted'`,
    )
  ).rows.map((r) => ({ position: { pos: BigInt(r.position) }, streamId: r.stream_id, data: r.data }));
  const applied = await system.pool.query('SELECT position::text AS pos, applications FROM test_counter_applied ORDER BY position');
  expect(
    applied.rows.filter((r) => r.applications !== 1),
    'events applied more than once',
  ).to.deep.equal([]);
  const positions = events.map((e) => e.position.pos).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  expect(
    applied.rows.map((r) => r.pos),
    'applied events',
  ).to.deep.equal(positions.map(String));
  const totals = new Map<string, number>();
  for (const e of events) totals.set(e.streamId, (totals.get(e.streamId) ?? 0) + (e.data as { value: number }).value);
  const rows = await system.pool.query('SELECT stream_id, total::int AS total FROM test_counter_totals ORDER BY stream_id');
  expect(rows.rows).to.deep.equal([...totals].sort(([a], [b]) => (a < b ? -1 : 1)).map(([stream_id, total]) => ({ stream_id, total })));
}

/**
 * Waits until the store's guarded head covers every committed event. The guard is
 * cluster-wide: any transaction still running anywhere on the server (another
 * suite, a bench) holds back later commits for a moment.
 */
async function allDeliverable(system: TestSystem): Promise<void> {
  await eventually(
    async () => {
      const { rows } = await system.pool.query(`SELECT tx_id::text || '/' || position::text AS newest FROM events ORDER BY tx_id DESC, position DESC LIMIT 1`);
      return !rows[0] || formatPosition(await system.store.headPosition()) === rows[0].newest;
    },
    { what: 'every committed event to be deliverable', timeoutMs: 10_000 },
  );
}

async function auditRows(system: TestSystem): Promise<unknown[]> {
  return tableRows(system.pool, 'audit_log', 'id');
}

async function counterRows(system: TestSystem): Promise<{ applied: unknown[]; totals: unknown[] }> {
  return {
    applied: await tableRows(system.pool, 'test_counter_applied', 'position'),
    totals: await tableRows(system.pool, 'test_counter_totals', 'stream_id'),
  };
}

async function appendAudits(system: TestSystem, count: number, tag = 'a'): Promise<void> {
  for (let i = 0; i < count; i++) {
    const at = new Date(Date.UTC(2026, 10, 1 + (i % 3), 12, 0, i % 60));
    await recordAudit(
      system.store,
      {
        actor: `admin-${i % 4}`,
        method: i % 2 ? 'POST' : 'DELETE',
        path: `/control/v1/admin/things/${tag}${i}`,
        status_code: i % 5 ? 200 : 403,
        detail: i % 5 ? null : 'forbidden',
      },
      { actor: 'ignored', requestId: `req-${tag}-${i}`, clientAddress: `192.0.2.${i % 250}` },
      at,
    );
  }
}

/** A second process on the same database: its own pool, LISTEN connection, store and runtime. */
async function secondInstance(system: TestSystem, projections: readonly Projection[]) {
  const pool = createPool(system.db.url, 10);
  const listener = new PgListener(system.db.url, system.log);
  const store = new PgEventStore({ pool, listener, log: system.log, pollIntervalMs: 200 });
  const runtime = new ProjectionRuntime(store, pool, projections, system.log, 200);
  await runtime.attach();
  return {
    pool,
    store,
    runtime,
    async close() {
      await runtime.stop();
      await listener.close();
      await pool.end();
    },
  };
}

describe('The projection runtime', function () {
  this.timeout(30_000);

  let system: TestSystem | undefined;
  const open = async (counter: CounterOptions = {}) => {
    system = await createTestSystem({ projections: [auditLogProjection, counterProjection(counter)], pollIntervalMs: 200 });
    return system;
  };
  afterEach(async () => {
    await system?.close();
    system = undefined;
  });

  describe('async projections', () => {
    it('apply events appended before the start (catch-up) and after it (live)', async () => {
      const s = await open();
      await appendCounted(s.store, 25, { perAppend: 5 });
      expect(await counted(s)).to.equal(0);
      s.projections.start();
      await eventually(async () => (await counted(s)) === 25, { what: 'catch-up of 25 events', timeoutMs: 10_000 });
      await appendCounted(s.store, 7, { start: 25 });
      await eventually(async () => (await counted(s)) === 32, { what: '7 live events', timeoutMs: 10_000 });
      await expectExactlyOnce(s);
    });

    it('resume from the checkpoint after a stop mid-stream, applying no event twice', async () => {
      let seen = 0;
      // eslint-disable-next-line prefer-const -- assigned once the runtime exists; the hook reads it later
      let runtime: ProjectionRuntime | undefined;
      let stopping: Promise<void> | undefined;
      // Stop the first runtime in the middle of its second batch (of 1000): that
      // batch still commits, the rest is left for the next runtime.
      const s = await open({
        beforeApply: () => {
          seen += 1;
          if (seen === 1500 && runtime) stopping = runtime.stop();
        },
      });
      await appendCounted(s.store, 2600, { perAppend: 100 });
      await allDeliverable(s);
      runtime = s.projections;
      runtime.start();
      await eventually(() => stopping !== undefined, { what: 'the first runtime to stop', timeoutMs: 10_000 });
      await stopping;
      // The batch that was running when it stopped committed (normally events
      // 1001-2000); nothing after it.
      const afterStop = await counted(s);
      expect(afterStop).to.be.within(1500, 2599);
      expect(seen).to.equal(afterStop);
      const [status] = (await runtime.status()).filter((p) => p.name === 'test_counter');
      expect(status.events_applied).to.equal(afterStop);

      const second = await secondInstance(s, [auditLogProjection, counterProjection({ beforeApply: () => void (seen += 1) })]);
      try {
        second.runtime.start();
        await eventually(async () => (await counted(s)) === 2600, { what: 'the second runtime to finish', timeoutMs: 10_000 });
        await second.runtime.catchUp();
        await expectExactlyOnce(s);
        // The second runtime only saw what the first had not committed.
        expect(seen).to.equal(2600);
      } finally {
        await second.close();
      }
    });

    it('retry a batch that failed halfway without applying its first half twice', async () => {
      let failed = false;
      const s = await open({
        beforeApply: (event) => {
          if (!failed && (event.data as { value: number }).value === 30) {
            failed = true;
            throw new Error('injected failure in the middle of a batch');
          }
        },
      });
      await appendCounted(s.store, 60, { perAppend: 10 });
      s.projections.start();
      await eventually(async () => (await counted(s)) === 60, { what: 'all 60 events after the retry', timeoutMs: 10_000 });
      expect(failed).to.equal(true);
      await expectExactlyOnce(s);
    });

    it('show a failing batch in status until a batch succeeds again', async () => {
      let broken = true;
      const s = await open({
        beforeApply: () => {
          if (broken) throw new Error('read model table is missing a column');
        },
      });
      await appendCounted(s.store, 3);
      s.projections.start();
      const statusOf = async () => (await s.projections.status()).find((p) => p.name === 'test_counter')!;
      await eventually(async () => (await statusOf()).last_error !== null, { what: 'the failure in status', timeoutMs: 10_000 });
      const failing = await statusOf();
      expect(failing.last_error).to.equal('read model table is missing a column');
      expect(failing.last_error_at).to.be.a('string');
      expect(failing.lag_events).to.be.greaterThan(0);
      broken = false;
      await eventually(async () => (await counted(s)) === 3, { what: 'the recovery', timeoutMs: 15_000 });
      await eventually(async () => (await statusOf()).last_error === null, { what: 'the failure to clear', timeoutMs: 10_000 });
    });

    it('are applied exactly once when two runtimes on one database run them', async () => {
      const s = await open();
      const second = await secondInstance(s, [auditLogProjection, counterProjection()]);
      try {
        s.projections.start();
        second.runtime.start();
        // Appends through both instances while both runners compete for each batch.
        await Promise.all([
          appendCounted(s.store, 300, { streams: 5 }),
          appendCounted(second.store, 300, { streams: 4, start: 1000, perAppend: 3 }),
          appendAudits(s, 20),
        ]);
        const explain = async () => {
          const status = await s.projections.status();
          const horizon = (await s.pool.query('SELECT event_store_horizon()::text AS h, pg_snapshot_xmax(pg_current_snapshot())::text AS next')).rows[0];
          const writers = (
            await s.pool.query(
              `SELECT a.pid, a.backend_xid::text, a.state, left(a.query, 80) AS query FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid WHERE l.locktype = 'advisory' AND l.objid = 1 AND l.classid = 424242`,
            )
          ).rows;
          const locks = (
            await s.pool.query(
              `SELECT a.pid, a.state, a.wait_event, left(a.query, 100) AS query FROM pg_stat_activity a WHERE a.datname = current_database() AND a.state <> 'idle'`,
            )
          ).rows;
          return JSON.stringify({ counted: await counted(s), status, horizon, writers, busy: locks });
        };
        await eventually(async () => (await counted(s)) === 600, { what: 'both runners to apply 600 events', timeoutMs: 10_000, everyMs: 25, explain });
        await s.projections.catchUp();
        await expectExactlyOnce(s);
        // The inline projection ran once per append, whichever instance appended.
        expect((await auditRows(s)).length).to.equal(20);
      } finally {
        await second.close();
      }
    });
    it('are caught up by catchUp with every event committed before the call, even behind an older running transaction', async () => {
      const s = await open();
      await appendCounted(s.store, 5);
      // An older transaction (say, another instance's batch) still running: events
      // committed after it started are not deliverable until it ends.
      const blocker = await s.pool.connect();
      try {
        await blocker.query('BEGIN');
        await blocker.query('SELECT pg_current_xact_id()');
        await appendCounted(s.store, 4, { start: 5 });
        const release = sleep(300).then(() => blocker.query('COMMIT')); // the older transaction ends while catchUp waits for it
        await s.projections.catchUp();
        expect(await counted(s), 'events applied when catchUp resolved').to.equal(9);
        await release;
      } finally {
        blocker.release();
      }
    });
  });

  describe('rebuild', () => {
    it('of the inline audit_log and of an async projection yields tables identical to the live ones', async () => {
      const s = await open();
      await appendAudits(s, 40);
      await appendCounted(s.store, 120, { streams: 4, perAppend: 4 });
      await appendAudits(s, 10, 'b');
      s.projections.start();
      await eventually(async () => (await counted(s)) === 120, { what: 'the live async projection', timeoutMs: 10_000 });
      await s.projections.stop();

      const liveAudit = await auditRows(s);
      const liveCounter = await counterRows(s);
      expect(liveAudit).to.have.length(50);
      expect(liveCounter.totals).to.have.length(4);

      // Damage the read models so that a rebuild that kept anything would show.
      await s.pool.query(`UPDATE audit_log SET actor = 'tampered' WHERE id = (SELECT min(id) FROM audit_log)`);
      await s.pool.query(`DELETE FROM audit_log WHERE id = (SELECT max(id) FROM audit_log)`);
      await s.pool.query(`INSERT INTO audit_log (id, actor, method, path, status_code, created_at) VALUES (999999, 'x', 'GET', '/', 200, now())`);
      await s.pool.query(`UPDATE test_counter_totals SET total = total + 1`);
      await s.pool.query(`UPDATE test_counter_applied SET applications = 5 WHERE position = (SELECT min(position) FROM test_counter_applied)`);
      expect(await auditRows(s)).to.not.deep.equal(liveAudit);

      await allDeliverable(s);
      const results = await s.projections.rebuild(['audit_log', 'test_counter']);
      const head = await s.store.headPosition();
      expect(results.map((r) => [r.projection, r.events, formatPosition(r.position)])).to.deep.equal([
        ['audit_log', 170, formatPosition(head)],
        ['test_counter', 170, formatPosition(head)],
      ]);
      expect(await auditRows(s)).to.deep.equal(liveAudit);
      expect(await counterRows(s)).to.deep.equal(liveCounter);

      // The runner goes on from the rebuilt checkpoint: nothing is applied again.
      const after = new ProjectionRuntime(s.store, s.pool, [auditLogProjection, counterProjection()], s.log, 200);
      await appendCounted(s.store, 5, { start: 500 });
      await after.catchUp();
      await expectExactlyOnce(s);
    });

    it('of the inline audit_log while appends run ends identical to a fresh rebuild', async () => {
      const s = await open();
      await appendAudits(s, 30, 'seed');
      let appending = true;
      const writers = Array.from({ length: 4 }, async (_, w) => {
        let i = 0;
        while (appending) {
          await recordAudit(
            s.store,
            { actor: `writer-${w}`, method: 'POST', path: `/w/${w}/${i}`, status_code: 201, detail: null },
            { actor: 'x', requestId: `w${w}-${i}` },
            new Date(Date.UTC(2026, 10, 2, 0, 0, i % 60)),
          );
          i += 1;
        }
        return i;
      });
      const rebuilds: number[] = [];
      // Several rebuilds, each overlapping appends that are mid-transaction.
      for (let r = 0; r < 4; r++) {
        await sleep(40); // appends go on between two rebuilds
        const [result] = await s.projections.rebuild(['audit_log']);
        rebuilds.push(result.events);
      }
      appending = false;
      const written = (await Promise.all(writers)).reduce((a, b) => a + b, 0);
      expect(written, 'appends during the rebuilds').to.be.greaterThan(0);
      expect(rebuilds[rebuilds.length - 1]).to.be.greaterThan(rebuilds[0]);

      const settled = await auditRows(s);
      expect(settled).to.have.length(30 + written);
      await s.projections.rebuild(['audit_log']);
      expect(await auditRows(s)).to.deep.equal(settled);
    });

    it('of an async projection while its runner and appends run leaves every event applied once', async () => {
      const s = await open();
      await appendCounted(s.store, 200, { perAppend: 10 });
      s.projections.start();
      let appending = true;
      const writer = (async () => {
        let n = 0;
        while (appending) {
          await appendCounted(s.store, 3, { start: 10_000 + n });
          n += 3;
        }
        return n;
      })();
      for (let r = 0; r < 3; r++) {
        await sleep(50); // the runner and the appends go on between two rebuilds
        await s.projections.rebuild(['test_counter']);
      }
      appending = false;
      const written = await writer;
      await s.projections.catchUp();
      expect(await counted(s)).to.equal(200 + written);
      await expectExactlyOnce(s);
    });
  });

  describe('status', () => {
    it('shows each checkpoint and its lag: behind before catch-up, at the head after', async () => {
      const s = await open();
      await appendCounted(s.store, 12, { perAppend: 4 });
      await appendAudits(s, 3);
      await allDeliverable(s);

      const before = await s.projections.status();
      const head = formatPosition(await s.store.headPosition());
      const audit = before.find((p) => p.name === 'audit_log')!;
      const counter = before.find((p) => p.name === 'test_counter')!;
      expect(audit).to.include({ mode: 'inline', checkpoint: head, head, lag_events: 0 });
      expect(counter).to.include({ mode: 'async', checkpoint: '0/0', head, lag_events: 15, events_applied: 0 });

      await s.projections.catchUp();
      const after = (await s.projections.status()).find((p) => p.name === 'test_counter')!;
      expect(after).to.include({ checkpoint: head, head, lag_events: 0, events_applied: 15 });

      await appendCounted(s.store, 2, { start: 100 });
      await allDeliverable(s);
      const behind = (await s.projections.status()).find((p) => p.name === 'test_counter')!;
      expect(behind.lag_events).to.equal(2);
      expect(behind.checkpoint).to.equal(head);
    });

    it('counts as lag of an inline projection the events of its types appended before it was attached, until a rebuild applies them', async () => {
      // A system without the audit log: its events are appended and applied by nothing.
      system = await createTestSystem({ projections: [counterProjection()], pollIntervalMs: 200 });
      const s = system;
      await appendAudits(s, 3);
      await appendCounted(s.store, 4);
      // The projection arrives (a new release of the process): its tables, then attach.
      const later = new ProjectionRuntime(s.store, s.pool, [auditLogProjection, counterProjection()], s.log, 200);
      await migrate(s.pool, later.migrationSets());
      await later.attach();
      const auditStatus = async () => (await later.status()).find((p) => p.name === 'audit_log')!;
      expect(await auditRows(s)).to.deep.equal([]);
      expect(await auditStatus()).to.include({ mode: 'inline', checkpoint: '0/0', lag_events: 3 });

      // Appended from now on: applied in their append's transaction, the three before still are not.
      await appendAudits(s, 2, 'b');
      await allDeliverable(s);
      expect(await auditRows(s)).to.have.length(2);
      expect(await auditStatus()).to.include({ checkpoint: '0/0', lag_events: 3 });
      // Another process attaching it later does not move where application began.
      const other = await secondInstance(s, [auditLogProjection, counterProjection()]);
      await other.close();
      expect((await auditStatus()).lag_events).to.equal(3);

      await later.rebuild(['audit_log']);
      expect(await auditRows(s)).to.have.length(5);
      await appendAudits(s, 1, 'c');
      await allDeliverable(s);
      const head = formatPosition(await s.store.headPosition());
      expect(await auditStatus()).to.include({ checkpoint: head, head, lag_events: 0 });
    });
  });
});
