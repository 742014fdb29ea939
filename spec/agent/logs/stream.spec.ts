import { expect } from 'chai';
import { logSpec, type LogSpecInput } from '../../../domain/probes/spec.js';
import { journalEntry } from '../../../agent/logs/journal.js';
import { LogRing } from '../../../agent/logs/ring.js';
import { streamLogs } from '../../../agent/logs/stream.js';
import { createJob, jobEvents } from '../support/jobs.js';
import { startOpsServer, testAgent, type OpsServer, type TestAgent } from '../support/ops.js';
import { eventually } from '../../support/wait.js';

describe('agent log streaming', function () {
  this.timeout(40_000);

  describe('the ring', () => {
    it('counts warnings and errors of the last hour, even after info lines pushed them out of the ring', () => {
      const ring = new LogRing(3);
      const line = (level: number, msg: string, time: number) => ring.write(JSON.stringify({ level, time, name: 'dn42-agent', msg }));
      const t0 = Date.parse('2026-11-22T10:00:00Z');
      line(50, 'old error', t0);
      line(40, 'a warning', t0 + 1_000_000);
      line(50, 'apply failed', t0 + 2_000_000);
      for (let i = 0; i < 5; i++) line(30, `info ${i}`, t0 + 2_000_001 + i);
      expect(ring.recent().map((e) => e.message)).to.deep.equal(['info 2', 'info 3', 'info 4']);
      expect(ring.lastHour(t0 + 3_700_000)).to.deep.equal({
        warnings: 1,
        errors: 1,
        last_error_at: new Date(t0 + 2_000_000).toISOString(),
        last_error_message: 'apply failed',
      });
      expect(ring.lastHour(t0 + 10_000_000)).to.deep.equal({ warnings: 0, errors: 0, last_error_at: null, last_error_message: null });
    });
  });

  describe('journal lines', () => {
    it('reads the agent pino JSON inside MESSAGE, else the journal priority and identifier', () => {
      const pino = JSON.stringify({ level: 40, time: 1, name: 'dn42-agent', msg: 'session down' });
      expect(journalEntry(JSON.stringify({ __REALTIME_TIMESTAMP: '1763824000123456', PRIORITY: '6', SYSLOG_IDENTIFIER: 'node', MESSAGE: pino }))).to.deep.equal(
        {
          ts: '2025-11-22T15:06:40.123Z',
          level: 'WARNING',
          logger: 'dn42-agent',
          message: 'session down',
        },
      );
      expect(
        journalEntry(
          JSON.stringify({ __REALTIME_TIMESTAMP: '1763824000000000', PRIORITY: '3', SYSLOG_IDENTIFIER: 'systemd', MESSAGE: 'dn42-agent.service: Failed' }),
        ),
      ).to.include({
        level: 'ERROR',
        logger: 'systemd',
        message: 'dn42-agent.service: Failed',
      });
      expect(journalEntry('not json')).to.equal(null);
    });
  });

  describe('streaming to a real control server', () => {
    let server: OpsServer;
    let agent: TestAgent;
    before(async () => {
      server = await startOpsServer();
    });
    beforeEach(async () => {
      agent = await testAgent(server);
    });
    afterEach(async () => {
      await agent.cleanup();
      await server.control.sys.pool.query('DELETE FROM ui_jobs');
    });
    after(() => server.close());

    const start = async (input: LogSpecInput, journalctl?: string[]) => {
      const spec = logSpec(input);
      const id = await createJob(server, 'log', spec);
      const running = streamLogs(agent.rt, agent.ring, id, spec, undefined, journalctl);
      return { id, running, sse: await jobEvents(server, 'log', id) };
    };

    it('sends a snapshot of the ring filtered by level, then done', async () => {
      const log = agent.rt.logger;
      log.debug('reconcile tick');
      log.info('applied generation 3');
      log.warn('peer dn42_ams flapped');
      log.error('birdc configure failed');
      log.info('heartbeat');
      const { id, running, sse } = await start({ mode: 'snapshot', source: 'buffer', min_level: 'WARNING' });
      await running;
      await sse.ended;
      expect(sse.events.map((e) => e.event)).to.deep.equal(['logentries', 'done']);
      expect(sse.events[0].data).to.deep.include({ log_id: id, seq: 0 });
      expect(sse.events[0].data.entries.map((e: { level: string; message: string }) => [e.level, e.message])).to.deep.equal([
        ['WARNING', 'peer dn42_ams flapped'],
        ['ERROR', 'birdc configure failed'],
      ]);
      expect(sse.events[1].data).to.deep.equal({ type: 'done', log_id: id });
    });

    it('keeps the last `lines` entries containing the text (case-insensitive), in batches of 200 with rising seq', async () => {
      for (let i = 0; i < 600; i++) agent.rt.logger.info(`${i % 2 ? 'session FLAP' : 'tick'} ${i}`);
      const { running, sse } = await start({ mode: 'snapshot', source: 'buffer', lines: 250, contains: 'flap' });
      await running;
      await sse.ended;
      const batches = sse.events.filter((e) => e.event === 'logentries');
      expect(batches.map((b) => [b.data.seq, b.data.entries.length])).to.deep.equal([
        [0, 200],
        [1, 50],
      ]);
      expect(batches[0].data.entries[0].message).to.equal('session FLAP 101');
      expect(batches[1].data.entries.at(-1).message).to.equal('session FLAP 599');
    });

    it('tails: the recent lines first, then entries logged while it runs, and done after duration_seconds', async () => {
      agent.rt.logger.info('before the tail');
      const started = Date.now();
      const { id, running, sse } = await start({ mode: 'tail', source: 'buffer', duration_seconds: 10 });
      await eventually(() => sse.events.length >= 1, 5000, 'the first batch');
      agent.rt.logger.warn('logged during the tail');
      await eventually(() => sse.events.length >= 2, 5000, 'a live batch');
      expect(sse.events.map((e) => e.data.entries.map((x: { message: string }) => x.message))).to.deep.equal([['before the tail'], ['logged during the tail']]);
      await running;
      await sse.ended;
      expect(Date.now() - started).to.be.within(9_500, 15_000);
      expect(sse.events.at(-1)!.data).to.deep.equal({ type: 'done', log_id: id });
    });

    it('reads a journal snapshot through journalctl (argv and JSON lines), and ends with the error when the journal cannot be read', async () => {
      // A journalctl stand-in (the test machine may have no journal): prints its arguments as a plain line, then one agent line
      const pinoLine = JSON.stringify({ level: 50, time: 1, name: 'dn42-agent', msg: 'apply failed' });
      const script = `const m = (MESSAGE, PRIORITY) => console.log(JSON.stringify({ __REALTIME_TIMESTAMP: '1763824000000000', PRIORITY, SYSLOG_IDENTIFIER: 'node', MESSAGE }));
        m(process.argv.slice(1).join(' '), '6'); m(${JSON.stringify(pinoLine)}, '6');`;
      const read = await start({ mode: 'snapshot', source: 'journal', lines: 20 }, ['node', '-e', script, '--']);
      await read.running;
      await read.sse.ended;
      expect(read.sse.events.map((e) => e.data)).to.deep.equal([
        {
          type: 'log',
          log_id: read.id,
          seq: 0,
          entries: [
            { ts: '2025-11-22T15:06:40.000Z', level: 'INFO', logger: 'node', message: '-u dn42-agent -o json -n 20 --no-pager' },
            { ts: '2025-11-22T15:06:40.000Z', level: 'ERROR', logger: 'dn42-agent', message: 'apply failed' },
          ],
        },
        { type: 'done', log_id: read.id },
      ]);
      const broken = await start({ mode: 'snapshot', source: 'journal' }, ['false']);
      await broken.running;
      await broken.sse.ended;
      expect(broken.sse.events.map((e) => e.data)).to.deep.equal([{ type: 'done', log_id: broken.id, error: 'journal not available: journalctl exited 1' }]);
    });

    it('refuses a journal tail (the server never sends one) with done and the server’s error text', async () => {
      const id = await createJob(server, 'log', logSpec({ mode: 'snapshot', source: 'buffer' }));
      await streamLogs(agent.rt, agent.ring, id, { mode: 'tail', source: 'journal' });
      const sse = await jobEvents(server, 'log', id);
      await sse.ended;
      expect(sse.events.map((e) => e.data)).to.deep.equal([{ type: 'done', log_id: id, error: 'invalid source journal: tail supports only buffer' }]);
    });
  });
});
