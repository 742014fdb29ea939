import { expect } from 'chai';
import { jsonBatch, jsonbAt } from '../../infra/db/json-batch.js';
import { useTestDatabase } from '../support/database.js';

// Many documents as one bytea parameter (event data, desired states): each one
// must come back as the document sent, whatever its characters.
describe('jsonBatch: documents as one bytea of JSON texts', function () {
  this.timeout(20_000);
  const database = useTestDatabase([], 1);

  it('gives PostgreSQL each document back, multi-byte characters, quotes, null and absent values included', async () => {
    const docs = [{ name: 'zürich €', emoji: '😀', quote: 'a"b\\c', nested: { list: [1, 2.5, true, null] } }, null, [], 'text', 42, undefined, { '': '' }];
    const batch = jsonBatch(docs);
    const { rows } = await database.pool.query(
      `SELECT ${jsonbAt('$1::bytea', 'u.o', 'u.l')} AS doc FROM unnest($2::int[], $3::int[]) WITH ORDINALITY AS u(o, l, k) ORDER BY u.k`,
      [batch.bytes, batch.offsets, batch.lengths],
    );
    expect(rows.map((r: { doc: unknown }) => r.doc)).to.deep.equal(docs.map((d) => d ?? null));
    expect(batch.texts).to.deep.equal(docs.map((d) => JSON.stringify(d ?? null)));
  });
});
