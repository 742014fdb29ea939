import { expect } from 'chai';
import { Validation } from '../../../domain/errors.js';
import { JOB_LIMITS, isLive, runTimeoutMs } from '../../../domain/probes/jobs.js';
import { logSpec, probeSpec } from '../../../domain/probes/spec.js';
import { checkProbeTarget } from '../../../domain/probes/targets.js';

describe('probe targets', () => {
  const allowed = {
    'dn42 IPv4': '172.20.0.53',
    'dn42 anycast': '172.23.0.53',
    'dn42 172.31': '172.31.1.1',
    'dn42 10.127': '10.127.3.4',
    'dn42 IPv6': 'fd42:d42:d42:54::1',
    'RFC 1918 10/8': '10.1.2.3',
    'RFC 1918 172.16/12': '172.16.0.1',
    'RFC 1918 192.168/16': '192.168.1.1',
    'ULA outside fd00::/8': 'fc00::1',
    'IPv4 link-local': '169.254.10.1',
    'IPv6 link-local': 'fe80::1',
  };
  for (const [name, target] of Object.entries(allowed)) {
    it(`accepts ${name} (${target})`, () => {
      expect(checkProbeTarget(target).ok).to.equal(true);
    });
  }

  const refused = {
    'public IPv4': '8.8.8.8',
    'public IPv6': '2001:4860:4860::8888',
    loopback: '127.0.0.1',
    'IPv6 loopback': '::1',
    'CGNAT shared space': '100.64.0.1',
    'a host name': 'example.dn42',
    'a legacy IPv4 form': '10.1',
    'an address with a zone': 'fe80::1%eth0',
    'a prefix': '172.20.0.0/24',
    'an IPv4-mapped IPv6 address': '::ffff:10.0.0.1',
    multicast: 'ff02::1',
  };
  for (const [name, target] of Object.entries(refused)) {
    it(`refuses ${name} (${target})`, () => {
      expect(checkProbeTarget(target).ok).to.equal(false);
    });
  }
});

describe('probe spec', () => {
  it('fills the defaults', () => {
    expect(probeSpec({ tool: 'ping', target: '172.20.0.1' })).to.deep.equal({
      tool: 'ping',
      target: '172.20.0.1',
      count: 10,
      resolve: true,
      interface: null,
      max_size: null,
    });
  });

  it('keeps the interface for a link-local target and drops it otherwise', () => {
    expect(probeSpec({ tool: 'ping', target: 'fe80::2', interface: 'dn42_peer' }).interface).to.equal('dn42_peer');
    expect(probeSpec({ tool: 'ping', target: 'fd42::1', interface: 'dn42_peer' }).interface).to.equal(null);
  });

  it('refuses a public target with `invalid target <x>` and names the field', () => {
    expect(() => probeSpec({ tool: 'mtr', target: '1.1.1.1' }))
      .to.throw(Validation, /^invalid target 1\.1\.1\.1$/)
      .with.property('errors')
      .that.deep.equals([{ loc: ['body', 'spec', 'target'], msg: 'outside the dn42, private and link-local ranges', type: 'target_range' }]);
  });
});

describe('log spec', () => {
  it('fills the defaults of a tail', () => {
    expect(logSpec({ mode: 'tail', source: 'buffer' })).to.deep.equal({
      mode: 'tail',
      source: 'buffer',
      lines: 200,
      min_level: 'DEBUG',
      contains: null,
      duration_seconds: 120,
    });
  });

  it('has no duration for a snapshot, and an empty filter is no filter', () => {
    expect(logSpec({ mode: 'snapshot', source: 'journal', duration_seconds: 300, contains: '' })).to.deep.include({ duration_seconds: null, contains: null });
  });

  it('refuses a journal tail', () => {
    expect(() => logSpec({ mode: 'tail', source: 'journal' })).to.throw(Validation, /^invalid source journal/);
  });
});

describe('job lifetime', () => {
  const now = new Date('2026-11-01T12:00:00Z');
  const later = (ms: number) => new Date(now.getTime() + ms);

  it('gives a tail its duration plus a margin, a snapshot and a probe fixed times', () => {
    expect(runTimeoutMs('log', logSpec({ mode: 'tail', source: 'buffer', duration_seconds: 600 }))).to.equal(630_000);
    expect(runTimeoutMs('log', logSpec({ mode: 'snapshot', source: 'buffer' }))).to.equal(60_000);
    expect(runTimeoutMs('probe', probeSpec({ tool: 'mtu', target: '172.20.0.1' }))).to.equal(120_000);
  });

  it('keeps a done job for 120 s and an open one until its deadline', () => {
    const done = { status: 'done' as const, deadline: later(1000), done_at: now };
    expect(isLive(done, later(JOB_LIMITS.keepAfterDoneMs - 1))).to.equal(true);
    expect(isLive(done, later(JOB_LIMITS.keepAfterDoneMs))).to.equal(false);
    const running = { status: 'running' as const, deadline: later(5000), done_at: null };
    expect(isLive(running, later(4999))).to.equal(true);
    expect(isLive(running, later(5000))).to.equal(false);
  });
});
