import { execFileSync } from 'node:child_process';
import { expect } from 'chai';
import type { ProbeSpec } from '../../../domain/probes/spec.js';
import { runProbe } from '../../../agent/probes/index.js';
import { checkProbeSpec } from '../../../agent/probes/spec.js';
import { probeArgv } from '../../../agent/probes/tools.js';
import { createJob, jobEvents } from '../support/jobs.js';
import { startOpsServer, testAgent, type OpsServer, type TestAgent } from '../support/ops.js';

const spec = (extra: Partial<ProbeSpec>): ProbeSpec => ({
  tool: 'ping',
  target: '127.0.0.1',
  count: 2,
  resolve: false,
  interface: null,
  max_size: null,
  ...extra,
});

describe('agent probes', function () {
  this.timeout(60_000);

  describe('spec check (before anything runs)', () => {
    it('accepts the server spec and keeps the interface only for link-local targets', () => {
      expect(checkProbeSpec({ tool: 'ping', target: 'fe80::1', count: 3, resolve: true, interface: 'dn42_ams', max_size: null })).to.include({
        interface: 'dn42_ams',
        count: 3,
      });
      expect(checkProbeSpec({ tool: 'mtr', target: '172.20.0.53', interface: 'dn42_ams' })).to.include({ interface: null, count: 10, resolve: true });
    });

    it('refuses host names, option-like targets and interfaces, unknown tools and fields', () => {
      expect(() => checkProbeSpec({ tool: 'ping', target: 'example.com' })).to.throw('invalid target example.com');
      expect(() => checkProbeSpec({ tool: 'ping', target: '-f' })).to.throw('invalid target -f');
      expect(() => checkProbeSpec({ tool: 'ping', target: 'fe80::1', interface: '-I' })).to.throw(/invalid probe spec: \/interface/);
      expect(() => checkProbeSpec({ tool: 'nmap', target: '172.20.0.1' })).to.throw(/invalid probe spec: \/tool/);
      expect(() => checkProbeSpec({ tool: 'ping', target: '172.20.0.1', command: 'rm' })).to.throw(/invalid probe spec/);
      expect(() => checkProbeSpec('ping 172.20.0.1')).to.throw(/invalid probe spec/);
    });

    it('builds argv with options before the target, one element per value', () => {
      expect(probeArgv(spec({ tool: 'ping', target: 'fe80::1', interface: 'dn42_ams' }))).to.deep.equal([
        'ping',
        '-n',
        '-c',
        '2',
        '-W',
        '2',
        '-I',
        'dn42_ams',
        'fe80::1',
      ]);
      expect(probeArgv(spec({ tool: 'mtr', resolve: true }))).to.deep.equal(['mtr', '--report', '--report-wide', '--report-cycles', '2', '127.0.0.1']);
      expect(probeArgv(spec({ tool: 'traceroute', count: 10 }))).to.deep.equal(['traceroute', '-n', '-q', '3', '-w', '2', '-m', '30', '127.0.0.1']);
    });
  });

  describe('running and streaming to a real control server', () => {
    let server: OpsServer;
    let agent: TestAgent;
    before(async () => {
      server = await startOpsServer();
      agent = await testAgent(server);
    });
    after(async () => {
      await agent.cleanup();
      await server.close();
    });

    /** Runs a probe as the daemon would on `probe_request` and returns what the operator's SSE stream saw. */
    const probe = async (s: unknown) => {
      const id = await createJob(server, 'probe', s as ProbeSpec);
      await runProbe(agent.rt, id, s);
      const sse = await jobEvents(server, 'probe', id);
      await sse.ended;
      return { id, events: sse.events };
    };

    it('streams a ping to 127.0.0.1 line by line, then done with exit code 0', async () => {
      const { id, events } = await probe(spec({ tool: 'ping' }));
      const texts = events.filter((e) => e.event === 'output').map((e) => e.data.text as string);
      expect(texts[0]).to.match(/^PING 127\.0\.0\.1 /);
      expect(texts.filter((t) => /icmp_seq=\d+/.test(t))).to.have.length(2);
      expect(texts.some((t) => /^2 packets transmitted, 2 received, 0% packet loss/.test(t))).to.equal(true);
      expect(events.at(-1)).to.deep.include({ event: 'done', data: { type: 'done', probe_id: id, exit_code: 0 } });
    });

    it('runs traceroute and mtr to 127.0.0.1 through their real binaries', async () => {
      const trace = await probe(spec({ tool: 'traceroute', count: 1 }));
      expect(trace.events.map((e) => e.data.text).join('\n')).to.match(/traceroute to 127\.0\.0\.1[\s\S]* 1 {2}127\.0\.0\.1 /);
      expect(trace.events.at(-1)!.data).to.include({ exit_code: 0 });
      const mtr = await probe(spec({ tool: 'mtr', count: 1 }));
      expect(mtr.events.map((e) => e.data.text).join('\n')).to.match(/1\.\|-- 127\.0\.0\.1/);
      expect(mtr.events.at(-1)!.data).to.include({ exit_code: 0 });
    });

    it('bisects the path MTU on loopback down to a 1400-byte route and ends with PMTU_PAYLOAD 1372', async () => {
      // Given a loopback address whose route carries a locked MTU of 1400 (ICMP payload 1400 - 28)
      const target = `127.77.${process.pid % 250}.1`;
      execFileSync('ip', ['route', 'replace', 'local', `${target}/32`, 'dev', 'lo', 'mtu', 'lock', '1400', 'table', 'local']);
      try {
        // When the mtu probe runs with the default upper bound (1500)
        const { events } = await probe(spec({ tool: 'mtu', target }));
        // Then each step is a line, and the last one names the largest passing payload
        const texts = events.filter((e) => e.event === 'output').map((e) => e.data.text as string);
        expect(texts[0]).to.equal(`MTU bisection to ${target}, payload 0..1472`);
        expect(texts).to.include('payload 1472 (packet 1500): does not pass');
        expect(texts).to.include('payload 1372 (packet 1400): passes');
        expect(texts).to.include('payload 1373 (packet 1401): does not pass');
        expect(texts.at(-1)).to.equal('PMTU_PAYLOAD 1372');
        expect(events.at(-1)!.data).to.include({ type: 'done', exit_code: 0 });
      } finally {
        execFileSync('ip', ['route', 'del', 'local', `${target}/32`, 'dev', 'lo', 'table', 'local']);
      }
    });

    it('takes the whole bound when it passes (9200 on loopback: payload 9172)', async () => {
      const { events } = await probe(spec({ tool: 'mtu', max_size: 9200 }));
      expect(events.filter((e) => e.event === 'output').map((e) => e.data.text)).to.deep.equal([
        'MTU bisection to 127.0.0.1, payload 0..9172',
        'payload 9172 (packet 9200): passes',
        'PMTU_PAYLOAD 9172',
      ]);
    });

    it('answers a refused spec with done and its error, running nothing', async () => {
      const { id, events } = await probe({ tool: 'ping', target: 'localhost' });
      expect(events.map((e) => e.data)).to.deep.equal([{ type: 'done', probe_id: id, exit_code: null, error: 'invalid target localhost' }]);
    });

    it('streams the error output of a failing tool and reports its exit in done (no such interface)', async () => {
      const { events } = await probe(spec({ tool: 'ping', target: 'fe80::1', interface: 'nosuchif0', count: 1 }));
      expect(events.map((e) => e.data.text).join('\n')).to.match(/nosuchif0/);
      expect(events.at(-1)!.data).to.include({ type: 'done', exit_code: 2, error: 'ping exited with 2' });
    });
  });
});
