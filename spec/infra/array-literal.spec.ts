import { createRequire } from 'node:module';
import { expect } from 'chai';
import { booleanArray, numberArray, textArray } from '../../infra/db/array-literal.js';
import { useTestDatabase } from '../support/database.js';

// The driver's own conversion of a parameter: the text it sends for an array.
const { prepareValue } = createRequire(import.meta.url)('pg/lib/utils.js') as { prepareValue(v: unknown): string };

// Array parameters as literals made by us (a routing table's rows): PostgreSQL must
// read each element back as given, whatever its characters, and the literal must be
// the text node-postgres would have sent for the same array.
describe('array literals: statement parameters made without the driver', function () {
  this.timeout(20_000);
  const database = useTestDatabase([], 1);

  const texts = ['plain', '', 'a"b', 'back\\slash', '\\"', 'NULL', 'null', '{1,2,3}', 'a,b', ' spaced ', 'zürich €', '😀', null, 'end'];

  it('gives PostgreSQL each text back, quotes, backslashes, braces, commas, NULL as a word and null included', async () => {
    const { rows } = await database.pool.query('SELECT $1::text[] AS a', [textArray(texts)]);
    expect(rows[0].a).to.deep.equal(texts);
    expect(textArray([])).to.equal('{}');
    expect((await database.pool.query('SELECT cardinality($1::text[]) AS n', [textArray([])])).rows[0].n).to.equal(0);
  });

  it('gives numbers and booleans back, nulls included, as the types the statements cast them to', async () => {
    const numbers = [0, -1, 4242420000, 2 ** 53 - 1, null, 7];
    const { rows } = await database.pool.query('SELECT $1::bigint[]::text[] AS n, $2::float8[] AS f, $3::boolean[] AS b', [
      numberArray(numbers),
      numberArray([1.5, -0.25, null]),
      booleanArray([true, false, null, undefined]),
    ]);
    expect(rows[0].n).to.deep.equal(numbers.map((n) => (n === null ? null : String(n))));
    expect(rows[0].f).to.deep.equal([1.5, -0.25, null]);
    expect(rows[0].b).to.deep.equal([true, false, null, null]);
  });

  it('is the text node-postgres sends for the same array', () => {
    expect(textArray(texts)).to.equal(prepareValue(texts));
    // The driver quotes numbers too ('{"1","-2",NULL}'); PostgreSQL reads both the same.
    expect(numberArray([1, -2, null, 3])).to.equal(prepareValue([1, -2, null, 3]).replace(/"/g, ''));
  });
});
