import { expect } from 'chai';
import type { DesiredState } from '../../../domain/desired-state/schema.js';
import { renderAll, type RenderInputs } from '../../../agent/render/index.js';
import { bare, dns, policy, sessions, standalone } from './cases.js';
import { MESH, meshState } from './mesh.js';
import { expectSnapshot, PRIVATE_KEYS, PSK, SNAPSHOT_DIR } from './support.js';

const inputs = (state: DesiredState, extra: Partial<RenderInputs> = {}): RenderInputs => ({
  state,
  wireguardPrivateKey: PRIVATE_KEYS.fra1,
  renderedDir: SNAPSHOT_DIR(state.node.node_id),
  presharedKeys: { as44: PSK },
  ...extra,
});

describe('agent render: renderAll', () => {
  it('returns every file sorted by path, secrets 0600 and the rest 0644', () => {
    const files = renderAll(inputs(meshState('fra1')));
    const paths = files.map((f) => f.path);
    expect(paths).to.deep.equal([...paths].sort());
    expect(paths).to.deep.equal([
      'bird/bird.conf',
      'bird/ebgp.conf',
      'bird/filters.conf',
      'bird/internal.conf',
      'bird/roa_v4.conf',
      'bird/roa_v6.conf',
      'interfaces/dn42-as42.json',
      'interfaces/int-ams1.json',
      'interfaces/int-ber1.json',
      'interfaces/lo.json',
      'wireguard/dn42-as42.conf',
      'wireguard/int-ams1.conf',
      'wireguard/int-ber1.conf',
    ]);
    for (const f of files) expect(f.mode, f.path).to.equal(f.path.startsWith('wireguard/') ? 0o600 : 0o644);
    expect(files.filter((f) => f.content.includes(PRIVATE_KEYS.fra1)).map((f) => f.path)).to.deep.equal([
      'wireguard/dn42-as42.conf',
      'wireguard/int-ams1.conf',
      'wireguard/int-ber1.conf',
    ]);
  });

  it('is deterministic: the same inputs give the same bytes, a changed input changes only its files', () => {
    expect(renderAll(inputs(policy()))).to.deep.equal(renderAll(inputs(policy())));
    const before = renderAll(inputs(policy()));
    const state = policy();
    state.bird.blocked_prefixes.push('172.23.6.0/24');
    const after = renderAll(inputs(state));
    const changed = after.filter((f, i) => f.content !== before[i].content).map((f) => f.path);
    expect(changed).to.deep.equal(['bird/filters.conf']);
  });

  describe('snapshots (UPDATE_SNAPSHOTS=1 rewrites them)', () => {
    const cases: Record<string, () => RenderInputs> = {
      standalone: () => inputs(standalone()),
      'standalone-no-kernel': () => inputs(standalone(), { kernel: false }),
      bare: () => inputs(bare()),
      sessions: () => inputs(sessions()),
      policy: () => inputs(policy()),
      dns: () => inputs(dns()),
      ...Object.fromEntries(MESH.map((n) => [`mesh-${n}`, () => inputs(meshState(n))])),
    };
    for (const [name, make] of Object.entries(cases)) it(name, () => expectSnapshot(name, renderAll(make())));
  });
});
