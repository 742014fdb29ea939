import { expect } from 'chai';
import { blockablePrefix, blockedBy, blocks, withBlock, withoutBlock } from '../../../domain/fleet-ops/prefix-block.js';
import { Validation } from '../../../domain/errors.js';

describe('fleet ops: prefix blocks in the base template (domain)', () => {
  it('takes a prefix in canonical form and refuses anything else with invalid prefix: <input>', () => {
    expect(blockablePrefix('172.20.1.7/24')).to.equal('172.20.1.0/24');
    expect(blockablePrefix('FD42:0:0::1/48')).to.equal('fd42::/48');
    for (const bad of ['172.20.1.0', '172.20.1.0/33', 'fd42::/129', '10.1/8', 'nonsense', '172.20.1.0/24 ']) {
      expect(() => blockablePrefix(bad)).to.throw(Validation, `invalid prefix: ${bad}`);
    }
  });

  const templates: [string, Record<string, unknown> | undefined][] = [
    ['no template', undefined],
    ['an empty template', {}],
    ['a template without bird', { runtime: { wireguard_port_range: '51800-51830' } }],
    ['bird with other keys', { bird: { cold_potato_med: 50 } }],
    ['other blocks', { bird: { blocked_prefixes: ['fd42::/48'], import_limit: 9000 } }],
  ];
  for (const [what, template] of templates) {
    it(`block then unblock returns ${what} to what it was`, () => {
      const blocked = withBlock(template, '172.20.1.0/24')!;
      expect(blocks(blocked, '172.20.1.0/24')).to.equal(true);
      expect(withBlock(blocked, '172.20.1.0/24'), 'a second block changes nothing').to.equal(undefined);
      const restored = withoutBlock(blocked, '172.20.1.0/24');
      expect(restored ?? {}).to.deep.equal(template ?? {});
      expect(withoutBlock(restored, '172.20.1.0/24'), 'a second unblock changes nothing').to.equal(undefined);
    });
  }

  it('matches entries written in another form, removes all of them, and keeps the other entries as written', () => {
    const template = { bird: { blocked_prefixes: ['172.20.1.9/24', 'FD42::/48', '172.20.1.0/24'] } };
    expect(blocks(template, '172.20.1.0/24')).to.equal(true);
    expect(blockedBy(template)).to.deep.equal(['172.20.1.0/24', 'fd42::/48']);
    expect(withoutBlock(template, '172.20.1.0/24')).to.deep.equal({ bird: { blocked_prefixes: ['FD42::/48'] } });
  });
});
