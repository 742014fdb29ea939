import { expect } from 'chai';
import { orderRenames } from '../../../domain/fleet-ops/renames.js';

describe('fleet ops: orderRenames', () => {
  const names = (entries: [number, string][]) => new Map(entries);

  it('applies a chain in the order that frees each name first', () => {
    const { applied, blocked } = orderRenames(
      names([
        [1, 'a'],
        [2, 'b'],
      ]),
      names([
        [1, 'b'],
        [2, 'c'],
      ]),
    );
    expect(applied).to.deep.equal([
      { id: 2, from: 'b', to: 'c' },
      { id: 1, from: 'a', to: 'b' },
    ]);
    expect(blocked).to.deep.equal([]);
  });

  it('blocks a swap, a name kept by a record that is not renamed, and the higher id of two wanting one name', () => {
    expect(
      orderRenames(
        names([
          [1, 'a'],
          [2, 'b'],
        ]),
        names([
          [1, 'b'],
          [2, 'a'],
        ]),
      ).applied,
    ).to.deep.equal([]);
    expect(
      orderRenames(
        names([
          [1, 'a'],
          [2, 'x'],
        ]),
        names([[1, 'x']]),
      ).blocked,
    ).to.deep.equal([{ id: 1, from: 'a', to: 'x' }]);
    const both = orderRenames(
      names([
        [1, 'a'],
        [2, 'b'],
      ]),
      names([
        [2, 'x'],
        [1, 'x'],
      ]),
    );
    expect(both.applied).to.deep.equal([{ id: 1, from: 'a', to: 'x' }]);
    expect(both.blocked).to.deep.equal([{ id: 2, from: 'b', to: 'x' }]);
  });

  it('leaves nothing to apply on a second run over its own result', () => {
    const current = names([
      [1, 'a'],
      [2, 'b'],
      [3, 'c'],
    ]);
    const wanted = names([
      [1, 'b'],
      [2, 'c'],
      [3, 'a'],
      [4, 'z'],
    ]);
    const first = orderRenames(current, wanted);
    const after = new Map(current);
    for (const r of first.applied) after.set(r.id, r.to);
    expect(orderRenames(after, wanted).applied).to.deep.equal([]);
  });
});
