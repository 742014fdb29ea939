import { expect } from 'chai';
import { pruneTelemetry, RETENTION_DAYS } from '../../../infra/telemetry/retention.js';
import { statusEventById } from '../../../infra/telemetry/status-events.js';
import { insertStatusEvent, listStatusEvents } from '../../../infra/telemetry/store.js';
import { createTestSystem, type TestSystem } from '../../support/system.js';
import { snapshot } from '../../http/control/agent/telemetry-support.js';
import { recordSnapshot, type TelemetryDeps } from '../../../commands/telemetry.js';
import type { RuntimeSnapshot } from '../../../domain/telemetry/reports.js';

const DAY = 86_400_000;

describe('Status snapshots: what changed against the day’s base, read back whole', function () {
  this.timeout(30_000);
  let sys: TestSystem;
  beforeEach(async () => {
    sys = await createTestSystem({ projections: [] });
  });
  afterEach(async () => sys?.close());

  /** Snapshot bodies of n1 that differ from one to the next, as reports do. */
  const body = (i: number) => {
    const s = snapshot('n1') as unknown as { captured_at: string; interfaces: { rx_bytes: number }[]; containers: unknown[] };
    s.captured_at = new Date(Date.parse('2026-11-01T00:00:00Z') + i * 60_000).toISOString();
    s.interfaces[0].rx_bytes = 1000 + i * 17;
    if (i % 2 === 1) s.containers = s.containers.slice(1);
    return s;
  };

  it('stores only the changes after the first body of a day, and every list and detail answers the bodies as sent', async () => {
    const start = sys.clock.now().getTime(); // 2026-11-01T12:00Z
    const times = [start, start + 60_000, start + 120_000, start + DAY, start + DAY + 60_000];
    const ids: number[] = [];
    for (const [i, t] of times.entries()) {
      ids.push(await insertStatusEvent(sys.pool, 'n1', { kind: 'snapshot', generation: 1, status: 'ok', drift_count: null, payload: body(i) }, new Date(t)));
    }
    await insertStatusEvent(
      sys.pool,
      'n1',
      { kind: 'report', generation: 1, status: 'in_sync', drift_count: 0, payload: { node_id: 'n1', status: 'in_sync' } },
      new Date(start + 30_000),
    );

    // One base per node, kind and day; rows keep changes, never a whole body.
    const bases = await sys.pool.query(`SELECT kind, day::text AS day FROM status_bases ORDER BY day, kind`);
    expect(bases.rows).to.deep.equal([
      { kind: 'report', day: '2026-11-01' },
      { kind: 'snapshot', day: '2026-11-01' },
      { kind: 'snapshot', day: '2026-11-02' },
    ]);
    const stored = await sys.pool.query(`SELECT id, change, body FROM status_snapshots WHERE kind = 'snapshot' ORDER BY id`);
    expect(stored.rows.map((r) => r.body)).to.deep.equal([null, null, null, null, null]);
    expect(stored.rows[0].change).to.deep.equal({});
    expect(Object.keys(stored.rows[2].change).sort()).to.deep.equal(['captured_at', 'interfaces']);

    const listed = await listStatusEvents(sys.pool, 'n1', 'snapshot', 10);
    expect(listed.map((e) => e.id)).to.deep.equal([...ids].reverse());
    expect(listed.map((e) => e.payload)).to.deep.equal(times.map((_, i) => body(i)).reverse());
    for (const [i, id] of ids.entries()) expect((await statusEventById(sys.pool, id))!.payload).to.deep.equal(body(i));
    const all = await listStatusEvents(sys.pool, 'n1', undefined, 10);
    expect(all.find((e) => e.kind === 'report')!.payload).to.deep.equal({ node_id: 'n1', status: 'in_sync' });
  });

  it('keeps a day’s base while rows of that day remain, and drops it with the last of them', async () => {
    const start = sys.clock.now().getTime();
    const first = await insertStatusEvent(
      sys.pool,
      'n1',
      { kind: 'snapshot', generation: 1, status: 'ok', drift_count: null, payload: body(0) },
      new Date(start),
    );
    const late = await insertStatusEvent(
      sys.pool,
      'n1',
      { kind: 'snapshot', generation: 1, status: 'ok', drift_count: null, payload: body(1) },
      new Date(start + 3_600_000),
    );
    const next = await insertStatusEvent(
      sys.pool,
      'n1',
      { kind: 'snapshot', generation: 1, status: 'ok', drift_count: null, payload: body(2) },
      new Date(start + DAY),
    );

    // The cutoff falls between the day's two rows: the first goes, the later one still reads whole.
    await pruneTelemetry(sys.pool, new Date(start + RETENTION_DAYS * DAY + 60_000));
    expect(await statusEventById(sys.pool, first)).to.equal(undefined);
    expect((await statusEventById(sys.pool, late))!.payload).to.deep.equal(body(1));
    expect((await sys.pool.query(`SELECT count(*)::int AS n FROM status_bases`)).rows[0].n).to.equal(2);

    // A day later the whole day is gone, its base with it.
    await pruneTelemetry(sys.pool, new Date(start + (RETENTION_DAYS + 1) * DAY - 60_000));
    expect(await statusEventById(sys.pool, late)).to.equal(undefined);
    expect((await statusEventById(sys.pool, next))!.payload).to.deep.equal(body(2));
    expect((await sys.pool.query(`SELECT day::text AS day FROM status_bases`)).rows).to.deep.equal([{ day: '2026-11-02' }]);
  });
});

describe('Status snapshots written by the snapshot command (the day’s base cached per process)', function () {
  this.timeout(30_000);
  let sys: TestSystem;
  beforeEach(async () => {
    sys = await createTestSystem();
  });
  afterEach(async () => sys?.close());

  const body = (i: number) => {
    const s = snapshot('n1') as unknown as { captured_at: string; interfaces: { rx_bytes: number }[]; containers: unknown[] };
    s.captured_at = new Date(Date.parse('2026-11-01T00:00:00Z') + i * 60_000).toISOString();
    s.interfaces[0].rx_bytes = 1000 + i * 17;
    if (i % 2 === 1) s.containers = s.containers.slice(1);
    return s;
  };

  it('reads every snapshot back as sent when the base comes from the process cache, and makes the base again when it is gone', async () => {
    const deps: TelemetryDeps = { pool: sys.pool, store: sys.store, log: sys.log, background: sys.context.background };
    const sent: unknown[] = [];
    const record = async (i: number) => {
      const b = body(i) as unknown as RuntimeSnapshot;
      sent.push(JSON.parse(JSON.stringify(b)));
      await recordSnapshot(deps, b, { actor: 'spec' }, sys.clock.now());
      sys.clock.advance(60_000);
    };
    await record(0); // makes the day's base, cached once committed
    await record(1); // the cached base: no statement reads it
    await record(2);
    expect(deps.statusBases).to.not.equal(undefined);
    // The day's base goes (what retention does to an old day): the cached one is not used for a row it cannot read back.
    await sys.pool.query(`DELETE FROM status_bases WHERE node_id = 'n1' AND kind = 'snapshot'`);
    await record(3);
    await sys.context.background.drain();
    const rows = await listStatusEvents(sys.pool, 'n1', 'snapshot', 10);
    // The rows of the deleted base cannot be read back; the one after it made a new base and reads back whole.
    const [last] = rows;
    expect((await statusEventById(sys.pool, last.id))?.payload).to.deep.equal(sent[3]);
    const made = await sys.pool.query(`SELECT body FROM status_bases WHERE node_id = 'n1' AND kind = 'snapshot'`);
    expect(made.rows.map((r) => r.body)).to.deep.equal([sent[3]]);
  });

  it('reads snapshots recorded through the cached base back whole', async () => {
    const deps: TelemetryDeps = { pool: sys.pool, store: sys.store, log: sys.log, background: sys.context.background };
    const sent: unknown[] = [];
    for (let i = 0; i < 4; i++) {
      const b = body(i) as unknown as RuntimeSnapshot;
      sent.push(JSON.parse(JSON.stringify(b)));
      await recordSnapshot(deps, b, { actor: 'spec' }, sys.clock.now());
      sys.clock.advance(60_000);
    }
    await sys.context.background.drain();
    const rows = await listStatusEvents(sys.pool, 'n1', 'snapshot', 10);
    expect(rows.map((r) => r.payload)).to.deep.equal([...sent].reverse());
    expect((await sys.pool.query(`SELECT count(*)::int AS n FROM status_bases`)).rows[0].n).to.equal(1);
  });
});
