import { expect } from 'chai';
import { bucketShares, counterDelta, MAX_INTERVAL_SECONDS, trafficContributions } from '../../../domain/series/counters.js';
import {
  bucketIndex,
  bucketStarts,
  DEFAULT_TRAFFIC_GRID,
  gridEndingAt,
  MAX_GRID_POINTS,
  METRICS_GRIDS,
  onGrid,
  previousGrid,
  rollupWidthFor,
  tileWindow,
  TRAFFIC_GRIDS,
} from '../../../domain/series/grid.js';
import { CLOCK_SKEW_MS, placeSample, SAMPLE_RETENTION_DAYS } from '../../../domain/series/placement.js';

const at = (iso: string) => new Date(iso);
const epoch = (iso: string) => Date.parse(iso) / 1000;

describe('Series grid (domain/series/grid.ts)', () => {
  it('ends with the bucket holding now, aligned to the width since the epoch, ascending', () => {
    const grid = gridEndingAt({ bucket_seconds: 300, points: 3 }, at('2026-11-01T12:07:30Z'));
    expect(bucketStarts(grid)).to.deep.equal([epoch('2026-11-01T11:55:00Z'), epoch('2026-11-01T12:00:00Z'), epoch('2026-11-01T12:05:00Z')]);
  });

  it('places the previous window directly before, same width and count, index-aligned', () => {
    const grid = gridEndingAt(TRAFFIC_GRIDS['24h'], at('2026-11-01T12:07:30Z'));
    const before = previousGrid(grid);
    expect(before.points).to.equal(grid.points);
    expect(before.bucket_seconds).to.equal(grid.bucket_seconds);
    expect(before.start + before.points * before.bucket_seconds).to.equal(grid.start);
    expect(bucketStarts(grid).map((t, i) => t - bucketStarts(before)[i])).to.satisfy((d: number[]) => d.every((x) => x === 86_400));
  });

  it('keeps the contract widths: metrics 5 min/10 min/30 min/3 h, every grid at most 200 points', () => {
    expect(Object.values(METRICS_GRIDS).map((g) => [g.bucket_seconds, g.points])).to.deep.equal([
      [300, 12],
      [600, 36],
      [1800, 48],
      [10_800, 56],
    ]);
    expect(DEFAULT_TRAFFIC_GRID).to.deep.equal({ bucket_seconds: 300, points: 120 });
    for (const g of [...Object.values(METRICS_GRIDS), ...Object.values(TRAFFIC_GRIDS)]) expect(g.points).to.be.at.most(MAX_GRID_POINTS);
    expect(Object.entries(TRAFFIC_GRIDS).map(([r, g]) => [r, g.bucket_seconds * g.points])).to.deep.equal([
      ['6h', 21_600],
      ['24h', 86_400],
      ['7d', 604_800],
      ['30d', 2_592_000],
    ]);
    expect(() => gridEndingAt({ bucket_seconds: 60, points: 201 }, new Date())).to.throw(RangeError);
  });

  it('fills empty buckets with null, never 0, and finds the bucket of a time', () => {
    const grid = gridEndingAt({ bucket_seconds: 300, points: 3 }, at('2026-11-01T12:07:30Z'));
    expect(onGrid(grid, new Map([[epoch('2026-11-01T12:00:00Z'), 0]]))).to.deep.equal([null, 0, null]);
    expect(bucketIndex(grid, epoch('2026-11-01T12:09:59Z'))).to.equal(2);
    expect(bucketIndex(grid, epoch('2026-11-01T12:10:00Z'))).to.equal(-1);
    expect(bucketIndex(grid, epoch('2026-11-01T11:54:59Z'))).to.equal(-1);
  });

  it('tiles a whole window with the fewest rollup buckets: contiguous, exact, widest inside', () => {
    for (const spec of [...Object.values(TRAFFIC_GRIDS), DEFAULT_TRAFFIC_GRID, ...Object.values(METRICS_GRIDS)]) {
      const grid = gridEndingAt(spec, at('2026-11-01T12:07:30Z'));
      const end = grid.start + grid.points * grid.bucket_seconds;
      const tiles = tileWindow(grid.start, end);
      expect(tiles[0].from).to.equal(grid.start);
      expect(tiles.at(-1)!.to).to.equal(end);
      tiles.forEach((t, i) => {
        expect(t.from % t.width).to.equal(0);
        expect(t.to % t.width).to.equal(0);
        if (i > 0) expect(t.from).to.equal(tiles[i - 1].to);
      });
      const rows = tiles.reduce((n, t) => n + (t.to - t.from) / t.width, 0);
      expect(rows, `${spec.bucket_seconds}x${spec.points}`).to.be.at.most(Math.min(grid.points, 50));
    }
    expect(tileWindow(epoch('2026-10-30T23:00:00Z'), epoch('2026-11-01T01:00:00Z'))).to.deep.equal([
      { width: 3600, from: epoch('2026-10-30T23:00:00Z'), to: epoch('2026-10-31T00:00:00Z') },
      { width: 86_400, from: epoch('2026-10-31T00:00:00Z'), to: epoch('2026-11-01T00:00:00Z') },
      { width: 3600, from: epoch('2026-11-01T00:00:00Z'), to: epoch('2026-11-01T01:00:00Z') },
    ]);
    expect(tileWindow(epoch('2026-11-01T10:55:00Z'), epoch('2026-11-02T04:05:00Z'))).to.deep.equal([
      { width: 300, from: epoch('2026-11-01T10:55:00Z'), to: epoch('2026-11-01T11:00:00Z') },
      { width: 3600, from: epoch('2026-11-01T11:00:00Z'), to: epoch('2026-11-01T12:00:00Z') },
      { width: 14_400, from: epoch('2026-11-01T12:00:00Z'), to: epoch('2026-11-02T04:00:00Z') },
      { width: 300, from: epoch('2026-11-02T04:00:00Z'), to: epoch('2026-11-02T04:05:00Z') },
    ]);
  });

  it('reads the widest rollup that divides the grid width', () => {
    expect([300, 600, 1800, 3600, 10_800, 14_400].map(rollupWidthFor)).to.deep.equal([300, 300, 300, 3600, 3600, 14_400]);
    expect(() => rollupWidthFor(90)).to.throw(RangeError);
  });
});

describe('Cumulative counters (domain/series/counters.ts)', () => {
  it('counts a counter that went down as reset: what it holds since the restart, never negative', () => {
    expect(counterDelta(1000, 1500)).to.equal(500);
    expect(counterDelta(1_000_000, 200)).to.equal(200);
    expect(counterDelta(5, 5)).to.equal(0);
  });

  it('spreads an interval over the buckets it overlaps, by seconds', () => {
    const from = Date.parse('2026-11-01T12:04:00Z');
    const shares = bucketShares(from, from + 120_000, [300]);
    expect(shares).to.deep.equal([
      { width: 300, bucket: epoch('2026-11-01T12:00:00Z'), seconds: 60 },
      { width: 300, bucket: epoch('2026-11-01T12:05:00Z'), seconds: 60 },
    ]);
  });

  it('adds per interface and for the node, in proportion to the overlap', () => {
    const prevAt = Date.parse('2026-11-01T12:04:00Z');
    const previous = new Map([
      ['wg0', { interface: 'wg0', rx_bytes: 1000, tx_bytes: 0 }],
      ['wg1', { interface: 'wg1', rx_bytes: 50_000, tx_bytes: 0 }],
    ]);
    const out = trafficContributions(
      prevAt,
      previous,
      [
        { interface: 'wg0', rx_bytes: 13_000, tx_bytes: 600 },
        { interface: 'wg1', rx_bytes: 100, tx_bytes: 0 },
        { interface: 'new', rx_bytes: 9e9, tx_bytes: 9e9 },
      ],
      prevAt + 120_000,
    );
    const five = out.filter((c) => c.width === 300);
    expect(five.filter((c) => c.interface === 'wg0').map((c) => [c.rx_bytes, c.tx_bytes, c.seconds])).to.deep.equal([
      [6000, 300, 60],
      [6000, 300, 60],
    ]);
    expect(five.filter((c) => c.interface === 'wg1').map((c) => c.rx_bytes)).to.deep.equal([50, 50]);
    expect(five.filter((c) => c.interface === null).map((c) => [c.rx_bytes, c.seconds])).to.deep.equal([
      [6050, 60],
      [6050, 60],
    ]);
    expect(out.some((c) => c.interface === 'new')).to.equal(false);
    expect(out.filter((c) => c.width === 3600 && c.interface === null).map((c) => [c.rx_bytes, c.seconds])).to.deep.equal([[12_100, 120]]);
  });

  it('measures nothing without a previous snapshot, backwards, or over a gap longer than the limit', () => {
    const prev = new Map([['wg0', { interface: 'wg0', rx_bytes: 0, tx_bytes: 0 }]]);
    const cur = [{ interface: 'wg0', rx_bytes: 10, tx_bytes: 10 }];
    expect(trafficContributions(null, prev, cur, 1_000_000)).to.deep.equal([]);
    expect(trafficContributions(1_000_000, prev, cur, 1_000_000)).to.deep.equal([]);
    expect(trafficContributions(1_000_000, prev, cur, 1_000_000 + MAX_INTERVAL_SECONDS * 1000 + 1)).to.deep.equal([]);
    expect(trafficContributions(1_000_000, prev, cur, 1_000_000 + MAX_INTERVAL_SECONDS * 1000)).to.not.deep.equal([]);
  });
});

describe('Sample placement (domain/series/placement.ts)', () => {
  const now = at('2026-11-01T12:00:00Z');
  it('places a sample at the agent time, a late one included', () => {
    expect(placeSample('2026-11-01T11:20:00Z', now)).to.deep.equal({ at: at('2026-11-01T11:20:00Z'), clamped: 'none' });
  });
  it('clamps a time ahead of the server to now (within the skew and beyond)', () => {
    expect(placeSample(new Date(now.getTime() + CLOCK_SKEW_MS).toISOString(), now)).to.deep.equal({ at: now, clamped: 'skew' });
    expect(placeSample(new Date(now.getTime() + CLOCK_SKEW_MS + 1).toISOString(), now)).to.deep.equal({ at: now, clamped: 'ahead' });
  });
  it('reads a leap second as the next minute, as PostgreSQL does', () => {
    expect(placeSample('2026-10-31T23:59:60Z', now)).to.deep.equal({ at: at('2026-11-01T00:00:00Z'), clamped: 'none' });
  });
  it('drops a sample older than the retention', () => {
    const edge = now.getTime() - SAMPLE_RETENTION_DAYS * 86_400_000;
    expect(placeSample(new Date(edge).toISOString(), now).at).to.deep.equal(new Date(edge));
    expect(placeSample(new Date(edge - 1).toISOString(), now)).to.deep.equal({ at: null, clamped: 'expired' });
  });
});
