import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import pg from 'pg';
import { Registry } from 'prom-client';
import { startEmbeddedPostgres, type EmbeddedDatabase } from '../../../infra/db/embedded.js';
import { createLogger } from '../../../infra/logger.js';
import { replicaLagGauge } from '../../../infra/metrics/database.js';
import { parsePrometheus, samplesOf } from '../../support/prometheus.js';
import { startStandbyOf } from '../../support/standby.js';
import { eventually } from '../../support/wait.js';

const STANDBY = 'spec-standby';

/**
 * `dn42_db_replica_lag_seconds` against a real streaming standby: a primary
 * (embedded PostgreSQL in a temporary directory), a standby made from a
 * low-level base backup of it (`startStandbyOf`), both real servers.
 */
describe('dn42_db_replica_lag_seconds with a real streaming standby', function () {
  this.timeout(120_000);
  const log = createLogger('silent');
  let dir: string;
  let primary: EmbeddedDatabase | undefined;
  let standby: { stop(): Promise<void> } | undefined;
  let pool: pg.Pool | undefined;
  /** A connection to the standby (recovery state, replay pause). */
  let recovering: pg.Client | undefined;
  const registry = new Registry();

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'dn42-standby-spec-'));
    // As root the servers run as `postgres`, which must be able to enter it.
    chmodSync(dir, 0o755);
    primary = await startEmbeddedPostgres(join(dir, 'primary'), log);
    pool = new pg.Pool({ connectionString: primary.url, max: 2 });
    replicaLagGauge(registry, log, pool);
  });
  after(async () => {
    await recovering?.end();
    await pool?.end();
    await standby?.stop();
    await primary?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const samples = async () =>
    samplesOf(parsePrometheus(await registry.metrics()), 'dn42_db_replica_lag_seconds').map((s) => ({ replica: s.labels!.replica, value: Number(s.value) }));

  it('has no samples without a standby, one per streaming standby by application_name that grows while replay is paused, and none once the standby stops', async () => {
    expect(await samples()).to.deep.equal([]);

    // A base backup of the running primary, made into a standby that streams from it.
    const made = await startStandbyOf({ url: primary!.url, pool: pool!, dir: join(dir, 'primary') }, join(dir, 'standby'), STANDBY);
    standby = made;
    recovering = new pg.Client({ connectionString: made.url() });
    await recovering.connect();
    expect((await recovering.query('SELECT pg_is_in_recovery() AS r')).rows[0].r, 'the copy runs as a standby').to.equal(true);

    // Some writes on the primary, so there is something to replay.
    await pool!.query('CREATE TABLE spec_replicated (n int); INSERT INTO spec_replicated SELECT generate_series(1, 1000)');
    const [sample] = await eventually(
      async () => {
        const s = await samples();
        return s.length === 1 && s;
      },
      { timeoutMs: 30_000, what: 'the standby in the gauge', explain: async () => (await pool!.query('SELECT * FROM pg_stat_replication')).rows },
    );
    expect(sample.replica).to.equal(STANDBY);
    // Replayed within a second or two on one machine; never negative, never absent because caught up.
    expect(sample.value).to.be.at.least(0).and.below(30);
    const { rows } = await pool!.query(`SELECT application_name, state FROM pg_stat_replication`);
    expect(rows).to.deep.equal([{ application_name: STANDBY, state: 'streaming' }]);

    // The standby stops replaying while the primary writes on: the lag grows with the wall clock.
    await recovering.query('SELECT pg_wal_replay_pause()');
    const paused = Date.now();
    await eventually(
      async () => {
        await pool!.query('INSERT INTO spec_replicated VALUES (1)');
        const [s] = await samples();
        return s && s.value >= 2 && s;
      },
      { timeoutMs: 30_000, everyMs: 250, what: 'a lag of 2 s or more while replay is paused', explain: samples },
    );
    const [held] = await samples();
    expect(held.value, 'no more than the pause lasted').to.be.at.most((Date.now() - paused) / 1000 + 1);
    await recovering.query('SELECT pg_wal_replay_resume()');
    await eventually(async () => (await samples())[0]?.value < 2, {
      timeoutMs: 30_000,
      everyMs: 250,
      what: 'the lag back under 2 s after the resume',
      explain: samples,
    });

    await recovering.end();
    recovering = undefined;
    await standby.stop();
    standby = undefined;
    await eventually(async () => (await samples()).length === 0, { timeoutMs: 30_000, what: 'the stopped standby gone from the gauge' });
  });
});
