import { expect } from 'chai';
import { diffStates } from '../../../domain/desired-state/diff.js';
import { materialise } from '../../../domain/desired-state/materialise.js';
import { context, iface, liveNode, session } from './fixtures.js';

describe('desired-state diff', () => {
  it('finds nothing between equal documents', () => {
    const doc = materialise(liveNode({}, { interfaces: [iface(1)], sessions: [session(1)] }), context());
    expect(diffStates(doc, structuredClone(doc))).to.deep.equal([]);
  });

  it('reports a changed field by path, matching interfaces by name', () => {
    const before = materialise(liveNode({}, { interfaces: [iface(1, { listen_port: 51801 }), iface(2, { listen_port: 51802 })] }), context());
    const after = materialise(liveNode({}, { interfaces: [iface(1, { listen_port: 51801 }), iface(2, { listen_port: 51809 })] }), context());
    expect(diffStates(before, after)).to.deep.equal([{ path: '/interfaces/name=wg2/listen_port', op: 'changed', from: 51802, to: 51809 }]);
  });

  it('shows an inserted interface as one addition, not a change to every later one', () => {
    const before = materialise(liveNode({}, { interfaces: [iface(1), iface(3)] }), context());
    const after = materialise(liveNode({}, { interfaces: [iface(1), iface(2), iface(3)] }), context());
    const entries = diffStates(before, after);
    expect(entries).to.have.length(1);
    expect(entries[0]).to.deep.include({ path: '/interfaces/name=wg2', op: 'added' });
    expect(entries[0].to).to.deep.include({ name: 'wg2' });
  });

  it('shows removed sessions with their whole value', () => {
    const before = materialise(liveNode({}, { sessions: [session(1), session(2)] }), context());
    const after = materialise(liveNode({}, { sessions: [session(2)] }), context());
    expect(diffStates(before, after)).to.deep.equal([{ path: '/bgp_sessions/name=s1', op: 'removed', from: before.bgp_sessions[0] }]);
  });

  it('compares lists of plain values as one value', () => {
    const before = materialise(liveNode({ base_template: { bird: { blocked_prefixes: ['172.20.0.0/24'] } } }), context());
    const after = materialise(liveNode({ base_template: { bird: { blocked_prefixes: ['172.20.0.0/24', '172.21.0.0/24'] } } }), context());
    expect(diffStates(before, after)).to.deep.equal([
      { path: '/bird/blocked_prefixes', op: 'changed', from: ['172.20.0.0/24'], to: ['172.20.0.0/24', '172.21.0.0/24'] },
    ]);
  });

  it('matches routers by node_id and adjacencies by interface, other object lists by index', () => {
    const a = { routers: [{ node_id: 'a', cost: 1 }], adjacencies: [{ interface: 'wg0', cost: 1 }], pref: [{ prefix: 'x', v: 1 }] };
    const b = {
      routers: [
        { node_id: 'b', cost: 1 },
        { node_id: 'a', cost: 2 },
      ],
      adjacencies: [{ interface: 'wg0', cost: 5 }],
      pref: [{ prefix: 'x', v: 2 }],
    };
    expect(diffStates(a, b).map((e) => [e.path, e.op])).to.deep.equal([
      ['/adjacencies/interface=wg0/cost', 'changed'],
      ['/pref/0/v', 'changed'],
      ['/routers/node_id=a/cost', 'changed'],
      ['/routers/node_id=b', 'added'],
    ]);
  });

  it('reports a value that changes type, null included, as a change', () => {
    expect(diffStates({ dns: null }, { dns: { enabled: true } })).to.deep.equal([{ path: '/dns', op: 'changed', from: null, to: { enabled: true } }]);
    expect(diffStates({ a: 1 }, { b: 1 })).to.deep.equal([
      { path: '/a', op: 'removed', from: 1 },
      { path: '/b', op: 'added', to: 1 },
    ]);
  });

  it('escapes / and ~ in path segments and sorts entries by path', () => {
    const entries = diffStates({ z: 1, 'a/b': 1, 'c~d': 1 }, { z: 2, 'a/b': 2, 'c~d': 2 });
    expect(entries.map((e) => e.path)).to.deep.equal(['/a~1b', '/c~0d', '/z']);
  });

  it('is deterministic whatever the key order of its inputs', () => {
    const a = {
      x: 1,
      y: [
        { name: 'b', v: 1 },
        { name: 'a', v: 1 },
      ],
    };
    const b = {
      y: [
        { v: 2, name: 'a' },
        { name: 'b', v: 2 },
      ],
      x: 2,
    };
    expect(JSON.stringify(diffStates(a, b))).to.equal(JSON.stringify(diffStates(structuredClone(a), structuredClone(b))));
    expect(diffStates(a, b).map((e) => e.path)).to.deep.equal(['/x', '/y/name=a/v', '/y/name=b/v']);
  });
});
