import { expect } from 'chai';
import { applyChanges, changesBetween } from '../../../domain/telemetry/changes.js';

const base = {
  node_id: 'n1',
  captured_at: '2026-11-01T12:00:00Z',
  interfaces: [
    { name: 'eth0', rx_bytes: 10, tx_bytes: 20 },
    { name: 'wg0', rx_bytes: 1, tx_bytes: 2 },
  ],
  containers: ['bird', 'agent'],
  self_metrics: { cpu: 1.5, last_error_at: null, last_error_message: null },
};

describe('changes between two report bodies', () => {
  it('keeps only what changed, by key and by index of arrays of the same length, and gives the body back', () => {
    const next = {
      ...base,
      captured_at: '2026-11-01T12:01:00Z',
      interfaces: [
        { name: 'eth0', rx_bytes: 15, tx_bytes: 20 },
        { name: 'wg0', rx_bytes: 1, tx_bytes: 2 },
      ],
      self_metrics: { cpu: 2, last_error_at: null, last_error_message: null },
    };
    const change = changesBetween(base, next);
    expect(change).to.deep.equal({ captured_at: ['=', '2026-11-01T12:01:00Z'], interfaces: { 0: { rx_bytes: ['=', 15] } }, self_metrics: { cpu: ['=', 2] } });
    expect(applyChanges(base, change)).to.deep.equal(next);
  });

  it('replaces arrays whose length changed, removes and adds keys, and changes types', () => {
    const { self_metrics: _gone, ...rest } = base;
    const next = { ...rest, containers: ['bird'], interfaces: null, generation: 4, extra: { a: [1, 2] } };
    const change = changesBetween(base, next);
    expect(change).to.deep.include({ containers: ['=', ['bird']], interfaces: ['=', null], self_metrics: ['-'], generation: ['=', 4] });
    expect(applyChanges(base, change)).to.deep.equal(next);
  });

  it('is empty between equal bodies, and the base comes back unchanged', () => {
    expect(changesBetween(base, structuredClone(base))).to.deep.equal({});
    expect(applyChanges(base, {})).to.deep.equal(base);
  });

  it('does not modify the base it applies changes to', () => {
    const copy = structuredClone(base);
    applyChanges(base, changesBetween(base, { ...base, interfaces: [{ name: 'x' }, { name: 'y' }] }));
    expect(base).to.deep.equal(copy);
  });

  it('gives back bodies whose values are arrays that look like changes', () => {
    const next = { ...base, containers: ['=', 'x'], interfaces: [['-'], { name: 'wg0' }] };
    expect(applyChanges(base, changesBetween(base, next))).to.deep.equal(next);
  });
});
