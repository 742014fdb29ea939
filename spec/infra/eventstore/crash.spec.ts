import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import pg from 'pg';
import { migrate } from '../../../infra/db/migrate.js';
import { eventStoreMigrations, PgEventStore } from '../../../infra/eventstore/postgres/store.js';
import { createLogger } from '../../../infra/logger.js';
import { createTestDatabase, type TestDatabase } from '../../support/database.js';
import { eventually } from '../../support/wait.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const SCRIPT = fileURLToPath(new URL('../../support/append-burst.ts', import.meta.url));

interface Ack {
  appendId: string;
  kind: 'single' | 'multi';
  streams: string[];
}

/**
 * Runs the burst child until it has acknowledged `acks` appends, then SIGKILLs it
 * while its other appends are in flight. Resolves with every acknowledgement it printed.
 */
function burstUntilKilled(url: string, run: string, acks: number): Promise<Ack[]> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', SCRIPT], {
      cwd: ROOT,
      env: { ...process.env, DATABASE_URL: url, BURST_RUN: run, BURST_WORKERS: '6' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const seen: Ack[] = [];
    let buffered = '';
    let stderr = '';
    let killed = false;
    // Bound of the burst: a child that stops acknowledging fails the spec instead of hanging it.
    const guard = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`burst child did not reach ${acks} acknowledgements (saw ${seen.length}); stderr: ${stderr}`));
    }, 15_000);
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.stdout.on('data', (chunk: Buffer) => {
      buffered += chunk.toString();
      // Only whole lines count: a line cut by the kill was not an acknowledgement we saw.
      let newline: number;
      while ((newline = buffered.indexOf('\n')) >= 0) {
        const line = buffered.slice(0, newline);
        buffered = buffered.slice(newline + 1);
        const parts = line.split(' ');
        if (parts[0] !== 'ack') continue;
        seen.push({ appendId: parts[1], kind: parts[2] as Ack['kind'], streams: parts[3].split(',') });
        if (seen.length >= acks && !killed) {
          killed = true;
          child.kill('SIGKILL');
        }
      }
    });
    child.once('error', reject);
    child.once('exit', (code, signal) => {
      clearTimeout(guard);
      if (signal !== 'SIGKILL') reject(new Error(`burst child exited by itself (code ${code}); stderr: ${stderr}`));
      else resolve(seen);
    });
  });
}

interface EventRow {
  position: string;
  stream_id: string;
  version: number;
  type: string;
  data: { appendId: string; part?: number; streams?: string[] };
}

describe('A process killed with SIGKILL during a burst of appends', function () {
  this.timeout(60_000);

  let db: TestDatabase;
  let pool: pg.Pool;

  before(async () => {
    db = await createTestDatabase();
    // Not createPool: its sessions would look like the child's (application_name dn42-control).
    pool = new pg.Pool({ connectionString: db.url, max: 4, application_name: 'crash-spec' });
    await migrate(pool, [eventStoreMigrations]);
  });

  after(async () => {
    await pool?.end();
    await db?.drop();
  });

  it('loses no acknowledged event and leaves no partial multi-stream append', async () => {
    const acknowledged: Ack[] = [];
    for (let run = 0; run < 3; run++) {
      // A different count each run so the kill lands at a different point of the burst.
      const acks = await burstUntilKilled(db.url, `run${run}`, 60 + run * 37);
      expect(acks.length, `run ${run} acknowledgements`).to.be.at.least(60 + run * 37);
      acknowledged.push(...acks);

      // The killed child's sessions must be gone (their transactions rolled back)
      // before we look; the server notices the closed sockets shortly (bounded wait).
      await eventually(
        async () =>
          (await pool.query(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'dn42-control'`)).rows[0]
            .n === 0,
        { what: 'the killed child sessions gone', timeoutMs: 10_000, everyMs: 100 },
      );
    }

    const events = (await pool.query<EventRow>('SELECT position::text, stream_id, version, type, data FROM events ORDER BY events.position')).rows;
    const byAppend = new Map<string, EventRow[]>();
    for (const e of events) {
      const list = byAppend.get(e.data.appendId) ?? [];
      list.push(e);
      byAppend.set(e.data.appendId, list);
    }

    // Every acknowledged append is there in full.
    for (const ack of acknowledged) {
      const found = byAppend.get(ack.appendId);
      expect(found, `acknowledged append ${ack.appendId}`).to.not.equal(undefined);
      if (ack.kind === 'single')
        expect(found!.map((e) => [e.stream_id, e.data.part])).to.deep.equal([
          [ack.streams[0], 0],
          [ack.streams[0], 1],
        ]);
      else expect(found!.map((e) => e.stream_id).sort()).to.deep.equal([...ack.streams].sort());
    }

    // Every append in the store, acknowledged or not, is whole: all of its events or none.
    for (const [appendId, found] of byAppend) {
      if (found[0].type === 'BurstSingle') {
        expect(
          found.map((e) => e.data.part),
          `single append ${appendId}`,
        ).to.deep.equal([0, 1]);
        expect(new Set(found.map((e) => e.stream_id)).size).to.equal(1);
        expect(found[1].version, `single append ${appendId} versions`).to.equal(found[0].version + 1);
      } else {
        const streams = found[0].data.streams!;
        expect(found.map((e) => e.stream_id).sort(), `multi append ${appendId}`).to.deep.equal([...streams].sort());
      }
    }
    // Acknowledged appends are a subset of those stored (a kill may also land just
    // after a commit, before its acknowledgement was printed).
    expect(byAppend.size).to.be.at.least(acknowledged.length);

    // Stream versions run 0..n-1 with no gap, and the streams table agrees.
    const versions = new Map<string, number[]>();
    for (const e of events) versions.set(e.stream_id, [...(versions.get(e.stream_id) ?? []), e.version]);
    const streamRows = (await pool.query<{ stream_id: string; version: number }>('SELECT stream_id, version FROM streams ORDER BY stream_id')).rows;
    expect(streamRows.map((r) => r.stream_id)).to.deep.equal([...versions.keys()].sort());
    for (const row of streamRows) {
      const list = versions.get(row.stream_id)!.sort((a, b) => a - b);
      expect(list, `versions of ${row.stream_id}`).to.deep.equal(list.map((_, i) => i));
      expect(row.version, `streams.version of ${row.stream_id}`).to.equal(list.length - 1);
    }

    // The global reader still delivers every event (nothing left in flight holds it back).
    const store = new PgEventStore({ pool, log: createLogger('silent') });
    // (Bounded wait: the reader's guard is cluster-wide, any other transaction holds it back a moment.)
    await eventually(async () => (await store.readAll(undefined, 100_000)).length === events.length, {
      what: `all ${events.length} events delivered`,
      everyMs: 50,
    });
  });
});
