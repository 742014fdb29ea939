import { expect } from 'chai';
import { downFor, forPeer, fromEvent, localizationOf, NOT_LOCALIZED, sessionCancelKey } from '../../../domain/notify/from-events.js';

const AT = '2026-11-01T12:00:00.000Z';
const AS = 4242420010;

describe('Signals from events (issue 32)', () => {
  it('makes a session leaving established a pending signal, and its return a cancellation', () => {
    const down = fromEvent({ type: 'BgpSessionStateChanged', data: { node_id: 'fra1', session: 'dn42_gamma', from: 'established', to: 'idle' } }, 'e1', AT, {
      sessionPeerAsn: AS,
      localization: NOT_LOCALIZED,
    });
    expect(down).to.have.property('cancelKey', sessionCancelKey('fra1', 'dn42_gamma'));
    const pending = (down as { pending: { title: string } }).pending;
    expect(pending.title).to.equal(`Session dn42_gamma on fra1 (AS${AS}) is down`);
    expect(downFor(pending as never, 600).title).to.equal(`Session dn42_gamma on fra1 (AS${AS}) has been down for 10 min`);
    expect(downFor(pending as never, 90).title).to.equal(`Session dn42_gamma on fra1 (AS${AS}) has been down for 90 s`);
    expect(
      fromEvent({ type: 'BgpSessionStateChanged', data: { node_id: 'fra1', session: 'dn42_gamma', from: 'idle', to: 'established' } }, 'e2', AT, {
        sessionPeerAsn: AS,
        localization: NOT_LOCALIZED,
      }),
    ).to.deep.equal({ recovered: sessionCancelKey('fra1', 'dn42_gamma') });
    // Between two down states: nothing.
    expect(
      fromEvent({ type: 'BgpSessionStateChanged', data: { node_id: 'fra1', session: 'dn42_gamma', from: 'idle', to: 'active' } }, 'e3', AT, {
        sessionPeerAsn: AS,
        localization: NOT_LOCALIZED,
      }),
    ).to.equal(null);
  });

  it("tells a peer when a prefix's flapping is localised in its own network", () => {
    const localization = localizationOf({ zone: 'near', confidence: 0.82, culprit_asn: AS, culprit_name: 'GAMMA', culprit_edge: null });
    expect(localization.lines).to.deep.equal([`localised: near at AS${AS} (GAMMA), confidence 82 %`]);
    const made = fromEvent(
      { type: 'FlapAlertOpened', data: { key: { kind: 'prefix', prefix: '172.22.1.0/24', peer_asn: AS }, nodes: ['fra1'], score: 140, at: AT } },
      'e4',
      AT,
      { sessionPeerAsn: null, localization },
    ) as { signal: Parameters<typeof forPeer>[0] };
    expect(made.signal).to.include({ kind: 'flap_alert_opened', peer_asn: AS, title: `Flap alert opened: prefix 172.22.1.0/24 from AS${AS}` });
    expect(forPeer(made.signal, AS).lines.at(-1)).to.equal(`This is localised on your side: AS${AS} is where the flapping starts.`);
    expect(forPeer(made.signal, 4242420077)).to.equal(made.signal);
    expect(localizationOf(null)).to.deep.equal({ lines: ['localised: not yet (too few observations)'], culprit_asn: null });
  });
});
