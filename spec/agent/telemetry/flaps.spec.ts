import { expect } from 'chai';
import { FlapCollector } from '../../../agent/telemetry/flaps/collector.js';
import { eventWeights, routeEvents, type RouteEvent } from '../../../agent/telemetry/flaps/events.js';
import { DecayedScores, FORGET_BELOW, PREFIX_HALF_LIFE_MS } from '../../../agent/telemetry/flaps/scores.js';
import { attributedPath, collapsePrepends, routeViews } from '../../../agent/telemetry/flaps/views.js';
import { parseBirdRouteList } from '../../../agent/telemetry/routes.js';

const MIN = 60_000;
const T0 = Date.UTC(2026, 10, 22, 12, 0, 0);
const LOCAL_AS = 4242420001;

/** One route as BIRD 2 prints it in `show route all` (the prefix column empty for a second route of the same prefix). */
const route = (prefix: string, protocol: string, stamp: string, path: number[], extra: { best?: boolean; nextHop?: string; hidePrefix?: boolean } = {}) =>
  [
    `${(extra.hidePrefix ? '' : prefix).padEnd(20)} unicast [${protocol} ${stamp} from 127.0.0.2]${extra.best === false ? '' : ' *'} (100) [AS${path.at(-1) ?? '?'}i]`,
    '\tType: BGP univ',
    '\tBGP.origin: IGP',
    `\tBGP.as_path: ${path.join(' ')}`,
    `\tBGP.next_hop: ${extra.nextHop ?? '127.0.0.2'}`,
    '\tBGP.local_pref: 100',
  ].join('\n');
const staticRoute = (prefix: string) => `${prefix.padEnd(20)} blackhole [s4 11:00:00.000] * (200)\n\tType: static univ`;
const table = (...routes: string[]) => `BIRD 2.0.12 ready.\nTable master4:\n${routes.join('\n')}\n`;

/** `show protocols all` with one BGP protocol per entry: state, since, and accepted import updates/withdrawals. */
const protocols = (...ps: { name: string; since?: string; established?: boolean; updates: number; withdraws: number }[]) =>
  [
    'BIRD 2.0.12 ready.',
    'Name       Proto      Table      State  Since         Info',
    ...ps.map((p) =>
      [
        `${p.name.padEnd(10)} BGP        ---        ${p.established === false ? 'start' : 'up   '}  ${p.since ?? '11:00:00.000'}  ${p.established === false ? 'Active' : 'Established'}`,
        `  BGP state:          ${p.established === false ? 'Active' : 'Established'}`,
        '  Channel ipv4',
        '    Route change stats:     received   rejected   filtered    ignored   accepted',
        `      Import updates:     ${String(p.updates).padStart(10)}          0          0          0 ${String(p.updates).padStart(10)}`,
        `      Import withdraws:   ${String(p.withdraws).padStart(10)}          0        ---          0 ${String(p.withdraws).padStart(10)}`,
        '',
      ].join('\n'),
    ),
  ].join('\n');

const views = (...routes: string[]) => routeViews(parseBirdRouteList(table(...routes)), LOCAL_AS);
const brief = (events: RouteEvent[]) => events.map((e) => `${e.kind} ${e.prefix} ${e.protocol} ${e.peer_asn}`);

describe('prefix flap scoring (pure)', () => {
  describe('decayed scores', () => {
    it('adds one per change and halves every 10 minutes', () => {
      const scores = new DecayedScores();
      scores.add('172.21.0.0/24', 4242420002, 4242420077, 1, T0);
      expect(PREFIX_HALF_LIFE_MS).to.equal(10 * MIN);
      expect(scores.top(T0)[0].score).to.equal(1);
      expect(scores.top(T0 + 10 * MIN)[0].score).to.be.closeTo(0.5, 1e-9);
      expect(scores.top(T0 + 20 * MIN)[0].score).to.be.closeTo(0.25, 1e-9);
    });

    it('decays the old score before adding, counts changes undecayed, and keeps the latest origin and time', () => {
      const scores = new DecayedScores();
      scores.add('172.21.0.0/24', 4242420002, 4242420077, 1, T0);
      scores.add('172.21.0.0/24', 4242420002, 4242420078, 3, T0 + 10 * MIN);
      expect(scores.top(T0 + 10 * MIN)).to.deep.equal([
        {
          prefix: '172.21.0.0/24',
          peer_asn: 4242420002,
          origin_asn: 4242420078,
          score: 3.5,
          flaps: 4,
          last_flap_at: T0 + 10 * MIN,
          as_path: null,
          announcements: 0,
          withdrawals: 0,
        },
      ]);
    });

    it('keys by (prefix, peer AS), own origin (null) apart, highest score first, cut to the top N', () => {
      const scores = new DecayedScores();
      scores.add('172.21.0.0/24', 4242420002, 4242420002, 1, T0);
      scores.add('172.21.0.0/24', 4242420003, 4242420002, 5, T0);
      scores.add('172.21.0.0/24', null, null, 2, T0);
      scores.add('172.20.0.0/24', 4242420002, 4242420002, 1, T0);
      const keys = (n?: number) => scores.top(T0, n).map((s) => `${s.prefix} ${s.peer_asn} ${s.score}`);
      expect(keys()).to.deep.equal(['172.21.0.0/24 4242420003 5', '172.21.0.0/24 null 2', '172.20.0.0/24 4242420002 1', '172.21.0.0/24 4242420002 1']);
      expect(keys(2)).to.deep.equal(['172.21.0.0/24 4242420003 5', '172.21.0.0/24 null 2']);
    });

    it('forgets a key once its score decayed below the floor (one change: after about 66 minutes)', () => {
      const scores = new DecayedScores();
      scores.add('172.21.0.0/24', 4242420002, 4242420002, 1, T0);
      expect(scores.top(T0 + 66 * MIN)).to.have.length(1);
      expect(scores.top(T0 + 67 * MIN)).to.deep.equal([]);
      expect(scores.size).to.equal(0);
      expect(Math.pow(2, -6.7)).to.be.below(FORGET_BELOW);
    });
  });

  describe('route changes between two looks', () => {
    const A = (stamp = '11:00:00.000', path = [4242420002, 4242420077], extra = {}) => route('172.21.0.0/24', 'peer_b', stamp, path, extra);

    it('attributes to the first hop after the local AS and the last hop; own prefixes have neither', () => {
      expect(attributedPath([LOCAL_AS, LOCAL_AS, 4242420002, 4242420077], LOCAL_AS)).to.deep.equal([4242420002, 4242420077]);
      const [[, seen]] = [...views(A())];
      expect(seen).to.include({ prefix: '172.21.0.0/24', protocol: 'peer_b', peer_asn: 4242420002, origin_asn: 4242420077, timed: true });
      const [[, own]] = [...views(route('172.20.5.0/24', 'ibgp_fra2', '11:00:00.000', []))];
      expect(own).to.include({ peer_asn: null, origin_asn: null });
    });

    it('leaves routes BIRD did not learn over BGP out', () => {
      expect([...views(staticRoute('172.20.0.0/24'), A()).values()].map((v) => v.protocol)).to.deep.equal(['peer_b']);
    });

    it('sees an announcement, a withdrawal, a new path and a re-announcement (new change time), and nothing for an unchanged route', () => {
      const other = (stamp: string) => route('172.22.0.0/24', 'peer_c', stamp, [4242420003]);
      const quiet = route('172.23.0.0/24', 'peer_c', '10:00:00.000', [4242420003]);
      expect(brief(routeEvents(views(A(), quiet), views(quiet, other('11:00:00.000'))))).to.deep.equal([
        'announce 172.22.0.0/24 peer_c 4242420003',
        'withdraw 172.21.0.0/24 peer_b 4242420002',
      ]);
      expect(brief(routeEvents(views(A()), views(A('11:05:00.000'))))).to.deep.equal(['change 172.21.0.0/24 peer_b 4242420002']);
      expect(brief(routeEvents(views(A()), views(A('11:00:00.000', [4242420002, 4242420099]))))).to.deep.equal(['change 172.21.0.0/24 peer_b 4242420002']);
      expect(routeEvents(views(A(), quiet), views(quiet, A()))).to.deep.equal([]);
    });

    it('counts a move to another peer AS at both ends, and ignores the best-route mark moving', () => {
      const moved = routeEvents(views(A('11:00:00.000', [4242420002, 4242420077])), views(A('11:01:00.000', [4242420005, 4242420077])));
      expect(brief(moved)).to.deep.equal(['withdraw 172.21.0.0/24 peer_b 4242420002', 'announce 172.21.0.0/24 peer_b 4242420005']);
      expect(routeEvents(views(A()), views(A('11:00:00.000', undefined, { best: false })))).to.deep.equal([]);
    });

    it('does not take a change time that aged from a time of day to a bare date for a change, but the other way round', () => {
      expect(routeEvents(views(A('11:00:00.000')), views(A('2026-11-21')))).to.deep.equal([]);
      expect(brief(routeEvents(views(A('2026-11-21')), views(A('09:00:00.000'))))).to.deep.equal(['change 172.21.0.0/24 peer_b 4242420002']);
      expect(brief(routeEvents(views(A('2026-11-22 11:00:00')), views(A('2026-11-22 11:00:07'))))).to.deep.equal(['change 172.21.0.0/24 peer_b 4242420002']);
    });

    it('tells apart two routes of one protocol for the same prefix (ADD-PATH) by their order', () => {
      const two = (hop: number) => [A(), route('172.21.0.0/24', 'peer_b', '11:00:00.000', [hop], { best: false, hidePrefix: true })];
      expect(views(...two(4242420009)).size).to.equal(2);
      expect(brief(routeEvents(views(...two(4242420009)), views(...two(4242420010))))).to.deep.equal([
        'withdraw 172.21.0.0/24 peer_b 4242420009',
        'announce 172.21.0.0/24 peer_b 4242420010',
      ]);
    });
  });

  describe('weights from BIRD import counters', () => {
    const e = (protocol: string): RouteEvent => ({ kind: 'change', prefix: '172.21.0.0/24', protocol, peer_asn: 1, origin_asn: 1, as_path: [1] });
    const m = (entries: Record<string, number>) => new Map(Object.entries(entries));

    it("spreads a protocol's accepted updates and withdrawals over its changes seen", () => {
      expect(eventWeights([e('peer_b'), e('peer_b'), e('peer_c')], m({ peer_b: 10, peer_c: 4 }), m({ peer_b: 30, peer_c: 5 }))).to.deep.equal([10, 10, 1]);
    });

    it('gives weight 1 without counters, after a counter went down, and when BIRD counted fewer than seen', () => {
      expect(eventWeights([e('peer_b')], m({}), m({ peer_b: 9 }))).to.deep.equal([1]);
      expect(eventWeights([e('peer_b')], m({ peer_b: 9 }), m({ peer_b: 2 }))).to.deep.equal([1]);
      expect(eventWeights([e('peer_b'), e('peer_b')], m({ peer_b: 9 }), m({ peer_b: 10 }))).to.deep.equal([1, 1]);
    });
  });

  describe('the collector', () => {
    const A = (stamp: string) => route('172.21.0.0/24', 'peer_b', stamp, [4242420002, 4242420077]);
    const look = (stamp: string, updates: number, withdraws: number, since?: string) => ({
      routes: table(A(stamp), staticRoute('172.20.0.0/24')),
      protocols: protocols({ name: 'peer_b', updates, withdraws, since }),
    });

    it('takes the first look as its baseline, then scores a burst between two looks by the import counters', () => {
      const c = new FlapCollector();
      expect(c.feedState).to.equal('unknown');
      expect(c.report('fra1', T0)).to.deep.equal({
        node_id: 'fra1',
        captured_at: new Date(T0).toISOString(),
        feed_state: 'unknown',
        entries: [],
        total_changes: 0,
      });

      expect(c.observe(look('11:00:00.000', 1, 0), LOCAL_AS, T0)).to.deep.equal([]);
      expect(c.feedState).to.equal('established');
      // 5 withdrawals and 5 re-announcements between the looks: seen once (new change time), counted 10 times
      expect(brief(c.observe(look('11:00:30.000', 6, 5), LOCAL_AS, T0 + MIN))).to.deep.equal(['change 172.21.0.0/24 peer_b 4242420002']);

      expect(c.report('fra1', T0 + 11 * MIN)).to.deep.equal({
        node_id: 'fra1',
        captured_at: new Date(T0 + 11 * MIN).toISOString(),
        feed_state: 'established',
        entries: [
          {
            prefix: '172.21.0.0/24',
            peer_asn: 4242420002,
            origin_asn: 4242420077,
            score: 5,
            flaps: 10,
            last_flap_at: new Date(T0 + MIN).toISOString(),
            as_path: [4242420002, 4242420077],
            announcements: 10,
            withdrawals: 0,
          },
        ],
        total_changes: 10,
      });
      // counted since the previous report: the next one starts again from zero, the score stays
      expect(c.report('fra1', T0 + 12 * MIN)).to.deep.include({ total_changes: 0 });
      expect(c.report('fra1', T0 + 12 * MIN).entries[0]).to.include({ announcements: 0, withdrawals: 0, flaps: 10 });
    });

    it('reports the path with prepends collapsed, and withdrawals and announcements apart, every key in total_changes', () => {
      expect(collapsePrepends([4242420002, 4242420002, 4242420005, 4242420077, 4242420077])).to.deep.equal([4242420002, 4242420005, 4242420077]);
      const c = new FlapCollector();
      const other = route('172.22.0.0/24', 'peer_b', '11:00:00.000', [4242420002, 4242420002, 4242420003]);
      c.observe({ routes: table(A('11:00:00.000'), other), protocols: protocols({ name: 'peer_b', updates: 1, withdraws: 0 }) }, LOCAL_AS, T0);
      c.observe({ routes: table(other), protocols: protocols({ name: 'peer_b', updates: 1, withdraws: 1 }) }, LOCAL_AS, T0 + MIN);
      c.observe({ routes: table(A('11:02:00.000')), protocols: protocols({ name: 'peer_b', updates: 2, withdraws: 2 }) }, LOCAL_AS, T0 + 2 * MIN);
      const report = c.report('fra1', T0 + 2 * MIN, 1);
      expect(report.total_changes).to.equal(3);
      expect(report.entries).to.have.length(1);
      expect(report.entries[0]).to.deep.include({ prefix: '172.21.0.0/24', as_path: [4242420002, 4242420077], announcements: 1, withdrawals: 1 });
      expect(c.report('fra1', T0 + 3 * MIN).entries.find((e) => e.prefix === '172.22.0.0/24')).to.deep.include({
        as_path: [4242420002, 4242420003],
        announcements: 0,
        withdrawals: 0,
      });
    });

    it('counts one change seen through several sessions (direct and an iBGP relay) once per look', () => {
      const both = (stamp: string) => table(A(stamp), route('172.21.0.0/24', 'ibgp_fra2', stamp, [4242420002, 4242420077], { best: false, hidePrefix: true }));
      const c = new FlapCollector();
      c.observe(
        { routes: both('11:00:00.000'), protocols: protocols({ name: 'peer_b', updates: 1, withdraws: 0 }, { name: 'ibgp_fra2', updates: 1, withdraws: 0 }) },
        LOCAL_AS,
        T0,
      );
      const events = c.observe(
        { routes: both('11:00:30.000'), protocols: protocols({ name: 'peer_b', updates: 3, withdraws: 1 }, { name: 'ibgp_fra2', updates: 2, withdraws: 1 }) },
        LOCAL_AS,
        T0 + MIN,
      );
      expect(brief(events)).to.deep.equal(['change 172.21.0.0/24 peer_b 4242420002', 'change 172.21.0.0/24 ibgp_fra2 4242420002']);
      // peer_b counted 3 changes, the relay 2: the stronger one stands
      expect(c.scores.top(T0 + MIN).map((s) => [s.peer_asn, s.flaps])).to.deep.equal([[4242420002, 3]]);
    });

    it('counts a session restart (new since; the counters started again, here above the old total) once per changed route', () => {
      const c = new FlapCollector();
      c.observe(look('11:00:00.000', 40, 30), LOCAL_AS, T0);
      c.observe(look('11:00:40.000', 80, 0, '11:00:39.000'), LOCAL_AS, T0 + MIN);
      expect(c.scores.top(T0 + MIN).map((s) => s.flaps)).to.deep.equal([1]);
    });

    it('reports the feed down when BIRD cannot be read or has no established session, and starts a new baseline after an outage', () => {
      const c = new FlapCollector();
      c.observe(look('11:00:00.000', 1, 0), LOCAL_AS, T0);
      c.lost();
      expect(c.report('fra1', T0).feed_state).to.equal('down');
      // BIRD restarted: every route has a new change time, which is not a flap of the peers
      expect(c.observe(look('11:30:00.000', 1, 0), LOCAL_AS, T0 + 30 * MIN)).to.deep.equal([]);
      expect(c.feedState).to.equal('established');
      c.observe({ routes: table(), protocols: protocols({ name: 'peer_b', updates: 1, withdraws: 1, established: false }) }, LOCAL_AS, T0 + 31 * MIN);
      expect(c.report('fra1', T0 + 31 * MIN)).to.deep.include({ feed_state: 'down' });
      expect(c.report('fra1', T0 + 31 * MIN).entries.map((x) => x.flaps)).to.deep.equal([1]);
    });
  });
});
