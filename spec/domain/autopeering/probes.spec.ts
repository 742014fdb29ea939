import { expect } from 'chai';
import { latencyFromLines, mtuFromLines, portalProbeSpec, probeTarget } from '../../../domain/autopeering/probes.js';

describe('Portal probes (domain)', () => {
  const shown = { link_local: 'fe80::10', peer_ipv4: null, peer_ipv6: null, interface_name: 'dn42_4242420010' };

  describe('probeTarget', () => {
    it("aims at the peer's tunnel address of each session form", () => {
      expect(probeTarget({ ...shown, form: 'link-local-mp' })).to.deep.include({ target: 'fe80::10', interface: 'dn42_4242420010' });
      expect(probeTarget({ ...shown, form: 'ula-mp', peer_ipv6: 'fd42:10::2' })?.target).to.equal('fd42:10::2');
      expect(probeTarget({ ...shown, form: 'dual-plain', peer_ipv4: '172.20.10.1', peer_ipv6: 'fd42:10::2' })?.target).to.equal('172.20.10.1');
      expect(probeTarget({ ...shown, form: 'dual-plain', peer_ipv6: 'fd42:10::2' })?.target).to.equal('fd42:10::2');
      expect(probeTarget({ ...shown, form: null, link_local: null })).to.equal(null);
    });

    it('MTU: the bisection bounded by the tunnel MTU; latency: 10 pings', () => {
      const target = probeTarget({ ...shown, form: 'link-local-mp' })!;
      expect(portalProbeSpec('mtu', target, 1400)).to.deep.include({ tool: 'mtu', max_size: 1400 });
      expect(portalProbeSpec('latency', target, 1400)).to.deep.include({ tool: 'ping', count: 10 });
    });
  });

  describe('mtuFromLines', () => {
    it('adds the IPv4 or IPv6 headers to the last PMTU_PAYLOAD; ok at the tunnel MTU, mismatch below, unreachable at 0 or without the line', () => {
      expect(mtuFromLines(['PMTU_PAYLOAD 1372'], 'fe80::10', 1420)).to.deep.equal({ status: 'ok', pmtu: 1420, mtu: 1420 });
      expect(mtuFromLines(['PMTU_PAYLOAD 1392'], '172.20.10.1', 1420)).to.deep.equal({ status: 'ok', pmtu: 1420, mtu: 1420 });
      expect(mtuFromLines(['PMTU_PAYLOAD 1000', 'PMTU_PAYLOAD 1232'], 'fd42::1', 1420)).to.deep.equal({ status: 'mismatch', pmtu: 1280, mtu: 1420 });
      expect(mtuFromLines(['PMTU_PAYLOAD 0'], 'fe80::10', 1420)).to.deep.equal({ status: 'unreachable', pmtu: null, mtu: 1420 });
      expect(mtuFromLines(['payload 1372 (packet 1420): passes'], 'fe80::10', 1420)).to.deep.equal({ status: 'unreachable', pmtu: null, mtu: 1420 });
    });
  });

  describe('latencyFromLines', () => {
    it("reads ping's summary; without replies null times and 100 % loss; without a summary 100 %", () => {
      expect(
        latencyFromLines(['10 packets transmitted, 10 received, 0% packet loss, time 9011ms', 'rtt min/avg/max/mdev = 1.1/2.25/3.5/0.4 ms']),
      ).to.deep.equal({
        rtt_ms_avg: 2.25,
        rtt_ms_max: 3.5,
        loss_pct: 0,
      });
      expect(
        latencyFromLines(['3 packets transmitted, 2 received, 33.3333% packet loss', 'rtt min/avg/max/mdev = 1.000/1.000/1.000/0.000 ms']),
      ).to.deep.include({
        loss_pct: 33.3,
      });
      expect(latencyFromLines(['10 packets transmitted, 0 received, +10 errors, 100% packet loss'])).to.deep.equal({
        rtt_ms_avg: null,
        rtt_ms_max: null,
        loss_pct: 100,
      });
      expect(latencyFromLines([])).to.deep.equal({ rtt_ms_avg: null, rtt_ms_max: null, loss_pct: 100 });
    });
  });
});
