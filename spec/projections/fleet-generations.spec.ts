import { expect } from 'chai';
import { withTransaction } from '../../infra/db/pool.js';
import { START, type RecordedEvent } from '../../infra/eventstore/types.js';
import { fleetProjection } from '../../projections/fleet/projection.js';
import { generationAt, getGeneration, publishedAdjacencies, publishedHeads } from '../../projections/fleet/queries.js';
import { node, startFleet, wg, type FleetHarness } from '../http/control/fleet/support.js';

/**
 * Fleet migration 0003: a generation row points at its `DesiredStatePublished`
 * event instead of holding a second copy of the state, when the event is in
 * `events`; otherwise (a KurrentDB log) it copies the state. Every read gives the
 * same document either way.
 */
describe('fleet projection: generations point at their event', function () {
  this.timeout(60_000);
  let h: FleetHarness;
  before(async () => {
    h = await startFleet();
    await h.client.post('/admin/nodes', node('fra1'));
    await h.client.post('/admin/nodes/fra1/interfaces', { spec: wg('dn42_a', 51801) });
    h.sys.clock.advance(60_000);
    await h.client.post('/admin/nodes/fra1/interfaces', { spec: wg('dn42_b', 51802) });
  });
  after(async () => h?.close());

  const published = async () =>
    (await h.sys.store.readAll(START, 10_000)).filter((e) => e.type === 'DesiredStatePublished' && (e.data as { node_id: string }).node_id === 'fra1');

  it('stores no second copy of a state whose event is in `events`, and reads it from the event', async () => {
    const { rows } = await h.sys.pool.query(`SELECT generation, state, event_position FROM generations WHERE node_id = 'fra1' ORDER BY generation`);
    const events = await published();
    expect(rows.map((r) => [r.generation, r.state, r.event_position])).to.deep.equal(
      events.map((e) => [(e.data as { generation: number }).generation, null, e.position.pos.toString()]),
    );
    const last = events[events.length - 1].data as { generation: number; state: Record<string, unknown> };
    expect((await getGeneration(h.sys.pool, 'fra1', last.generation))?.state).to.deep.equal(last.state);
    expect((await generationAt(h.sys.pool, 'fra1'))?.state).to.deep.equal(last.state);
    const [head] = await publishedHeads(h.sys.pool, [{ nodeId: 'fra1', known: null }]);
    expect(JSON.parse(head!.state_json!)).to.deep.equal(last.state);
    const text = await h.sys.pool.query(`SELECT (data -> 'state')::text AS s FROM events WHERE position = $1`, [
      events[events.length - 1].position.pos.toString(),
    ]);
    expect(head!.state_json).to.equal(text.rows[0].s);
    expect((await publishedAdjacencies(h.sys.pool)).get('fra1')).to.deep.equal(
      (last.state as { bird: { internal_topology: { adjacencies: unknown } } }).bird.internal_topology.adjacencies,
    );
  });

  it('copies the state when the event is not in `events` (another event log), with the same answers', async () => {
    const events = await published();
    // The same events as a KurrentDB log delivers them: positions and ids this database's `events` never had.
    const foreign: RecordedEvent[] = events.map((e, i) => ({
      ...e,
      id: `00000000-0000-4000-8000-00000000000${i}`,
      position: { tx: 1n, pos: 9_000_000_000n + BigInt(i) },
    }));
    const rolledBack = new Error('rolled back');
    await withTransaction(h.sys.pool, async (tx) => {
      const pointed = await getGeneration(tx, 'fra1', 2);
      const heads = await publishedHeads(tx, [{ nodeId: 'fra1', known: null }]);
      await tx.query(`DELETE FROM generations WHERE node_id = 'fra1'`);
      await fleetProjection.applyBatch!(tx, foreign.slice(0, 1));
      await fleetProjection.apply(tx, foreign[1]);
      const { rows } = await tx.query(`SELECT generation, state, event_position FROM generations WHERE node_id = 'fra1' ORDER BY generation`);
      expect(rows.map((r) => [r.generation, r.event_position])).to.deep.equal([
        [1, null],
        [2, null],
      ]);
      expect(rows.map((r) => r.state)).to.deep.equal(events.map((e) => (e.data as { state: unknown }).state));
      expect(await getGeneration(tx, 'fra1', 2)).to.deep.equal(pointed);
      // Byte for byte: the agent's document is the same text whether copied or read from the event.
      expect(await publishedHeads(tx, [{ nodeId: 'fra1', known: null }])).to.deep.equal(heads);
      throw rolledBack;
    }).catch((err) => {
      if (err !== rolledBack) throw err;
    });
  });
});
