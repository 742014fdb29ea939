import { expect } from 'chai';
import { recordRoutingTable } from '../../commands/routing.js';
import type { TelemetryDeps } from '../../commands/telemetry.js';
import type { RoutingTable } from '../../domain/telemetry/reports.js';
import { changedPositions, churnBetween, hashTable } from '../../infra/telemetry/known-tables.js';
import { createTestSystem, type TestSystem } from '../support/system.js';

type Route = RoutingTable['routes'][number];
const route = (prefix: string, as_path: number[], extra: Partial<Route> = {}): Route => ({
  prefix,
  protocol: 'ebgp_beta',
  origin_asn: as_path.at(-1) ?? null,
  as_path,
  rpki: 'valid',
  local: false,
  ...extra,
});
const table = (captured_at: string, routes: Route[]): RoutingTable => ({ node_id: 'n1', captured_at, rpki_observed: true, routes });

describe('commands: routing tables compared with the one this process stored last', () => {
  let sys: TestSystem;
  // Two instances on one database: each remembers only the tables it stored itself.
  const deps = (): TelemetryDeps => ({ pool: sys.pool, store: sys.store, log: sys.log, background: sys.context.background });

  before(async () => {
    sys = await createTestSystem();
  });
  after(async () => sys?.close());

  const storedRows = async () =>
    (
      await sys.pool.query(
        `SELECT seq, prefix, protocol, origin_asn::float8 AS origin_asn, as_path::float8[] AS as_path, rpki, local FROM routing_routes WHERE node_id = 'n1' ORDER BY seq`,
      )
    ).rows;
  const expectStored = async (t: RoutingTable) => expect(await storedRows()).to.deep.equal(t.routes.map((r, i) => ({ seq: i + 1, ...r })));
  const churnOf = async (id: number) =>
    (await sys.pool.query(`SELECT announced, withdrawn FROM routing_observations WHERE id = $1`, [id])).rows[0] as { announced: number; withdrawn: number };

  it('stores every change of the latest table row by row, and its churn, whichever instance stored the previous one', async () => {
    const [a, b] = [deps(), deps()];
    const t1 = table('2026-11-01T12:00:00Z', [route('172.20.0.0/24', [1, 2]), route('172.20.1.0/24', [1, 3]), route('fd42::/48', [4])]);
    const t2 = table('2026-11-01T12:05:00Z', [
      route('172.20.0.0/24', [1, 2]),
      route('172.20.1.0/24', [1, 3], { rpki: 'invalid' }),
      route('fd42::/48', [4, 5]),
      route('172.20.9.0/24', [6]),
    ]);
    const t3 = table('2026-11-01T12:10:00Z', [route('172.20.0.0/24', [1, 2], { local: true, protocol: 'static' }), route('172.20.7.0/24', [7])]);
    const t4 = table('2026-11-01T12:15:00Z', [route('172.20.0.0/24', [1, 2], { local: true, protocol: 'static' }), route('172.20.7.0/24', [8, 7])]);

    await recordRoutingTable(a, t1, new Date('2026-11-01T12:00:10Z'));
    await expectStored(t1);
    // Instance a stored the previous table: it compares here and sends the changed rows.
    const second = await recordRoutingTable(a, t2, new Date('2026-11-01T12:05:10Z'));
    await expectStored(t2);
    expect(await churnOf(second)).to.deep.equal({ announced: 1, withdrawn: 0 });
    // b never saw a table of n1: PostgreSQL compares.
    const third = await recordRoutingTable(b, t3, new Date('2026-11-01T12:10:10Z'));
    await expectStored(t3);
    expect(await churnOf(third)).to.deep.equal({ announced: 1, withdrawn: 3 });
    // a remembers t2, which is no longer the stored table: comparing with t2 would miss t3's rows.
    const fourth = await recordRoutingTable(a, t4, new Date('2026-11-01T12:15:10Z'));
    await expectStored(t4);
    expect(await churnOf(fourth)).to.deep.equal({ announced: 0, withdrawn: 0 });
    // And a knows t4 now: an unchanged table writes the same rows again, with no churn.
    const fifth = await recordRoutingTable(a, { ...t4, captured_at: '2026-11-01T12:20:00Z' }, new Date('2026-11-01T12:20:10Z'));
    await expectStored(t4);
    expect(await churnOf(fifth)).to.deep.equal({ announced: 0, withdrawn: 0 });
  });

  it('hashes every field of a route: a change of any one is a changed position; churn counts distinct prefixes', () => {
    const base = route('172.20.0.0/24', [4242420001, 4242420002]);
    const variants: Route[] = [
      { ...base, prefix: '172.20.0.0/25' },
      { ...base, protocol: 'ebgp_gamma' },
      { ...base, origin_asn: null },
      { ...base, as_path: [4242420001] },
      { ...base, as_path: [4242420002, 4242420001] },
      { ...base, rpki: null },
      { ...base, rpki: 'not_found' },
      { ...base, local: true },
    ];
    const known = hashTable(table('t', [base, base])).routes;
    for (const v of variants) expect(changedPositions(known, hashTable(table('t', [base, v])).routes), JSON.stringify(v)).to.deep.equal([2]);
    expect(changedPositions(known, hashTable(table('t', [base, base, base])).routes)).to.deep.equal([3]);
    const before = hashTable(table('t', [base, { ...base, protocol: 'x' }, route('fd42::/48', [1])])).prefixes;
    const after = hashTable(table('t', [base, route('fd42:1::/48', [1]), route('fd42:2::/48', [1])])).prefixes;
    expect(churnBetween(before, after)).to.deep.equal({ announced: 2, withdrawn: 1 });
  });
});
