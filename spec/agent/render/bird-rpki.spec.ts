import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'chai';
import type { DesiredState, RpkiMode } from '../../../domain/desired-state/schema.js';
import { RoaIndex, type RoaSet, type RpkiState } from '../../../domain/rpki/roa.js';
import { renderAll } from '../../../agent/render/index.js';
import { spawnBird } from '../support/bird-process.js';
import { eventually } from '../../support/wait.js';
import { policy } from './cases.js';
import { desired, expectBirdAccepts, PRIVATE_KEYS, PSK, renderedInTempDir, run } from './support.js';

/**
 * RPKI in the rendered BIRD configuration: the ROA tables and files per mode,
 * parsed by the real `bird -p`, and the eBGP import filter run by a real BIRD
 * against the rendered ROA tables. The same routes' states as BIRD's own
 * `roa_check` computes them are compared with the agent's `RoaIndex`, which
 * the routing-table report uses.
 */

const ROAS: RoaSet = {
  commit: 'c0ffee',
  synced_at: '2026-11-01T12:00:00.000Z',
  roas: [
    { prefix: '172.20.8.0/22', max_length: 24, asn: 4242420002 },
    { prefix: '172.20.16.0/24', max_length: 24, asn: 4242420002 },
    { prefix: '172.20.16.0/24', max_length: 24, asn: 4242420003 },
    { prefix: 'fd42:4242:1::/48', max_length: 48, asn: 4242420002 },
  ],
};

const withMode = (mode: RpkiMode): DesiredState => desired({ ...policy(), bird: { ...policy().bird, rpki: { mode } } });
const inputs = (state: DesiredState, roas: RoaSet | null = ROAS) => ({
  state,
  wireguardPrivateKey: PRIVATE_KEYS.fra1,
  presharedKeys: { as44: PSK },
  kernel: false,
  roas,
});
const files = (state: DesiredState, roas: RoaSet | null = ROAS) =>
  new Map(renderAll({ ...inputs(state, roas), renderedDir: '/r' }).map((f) => [f.path, f.content]));

/** `route <prefix> unreachable { bgp_path.prepend(<origin>); };` for a static probe. */
const route = (prefix: string, origin: number) => `route ${prefix} unreachable { bgp_path.prepend(${origin}); };`;

/** IPv4 probes: valid, beyond max_length, wrong origin, uncovered, and a second origin of the same prefix. */
const V4: [string, number, RpkiState][] = [
  ['172.20.8.0/24', 4242420002, 'valid'],
  ['172.20.10.0/23', 4242420002, 'valid'],
  ['172.20.8.0/25', 4242420002, 'invalid'],
  ['172.20.9.0/24', 4242420003, 'invalid'],
  ['172.20.12.0/24', 4242420003, 'not_found'],
  ['172.20.16.0/24', 4242420003, 'valid'],
];
const V6: [string, number, RpkiState][] = [
  ['fd42:4242:1::/48', 4242420002, 'valid'],
  ['fd42:4242:1::/56', 4242420002, 'invalid'],
  ['fd42:4242:2::/48', 4242420002, 'not_found'],
];

/**
 * A real BIRD with the rendered filters and ROA statics and one static probe per
 * family whose import filter is the session's; `body` asks it questions.
 */
async function withBird<T>(state: DesiredState, body: (birdc: (...args: string[]) => Promise<string>) => Promise<T>): Promise<T> {
  return renderedInTempDir(inputs(state), async (dir) => {
    const conf = join(dir, 'probe.conf');
    const probe = (family: 'ipv4' | 'ipv6', rows: [string, number, RpkiState][]) =>
      `protocol static probe_${family} {\n\t${family} { import filter ebgp_peer_mp_import_${family === 'ipv4' ? 'v4' : 'v6'}; };\n\t${rows.map(([p, o]) => route(p, o)).join('\n\t')}\n}\n`;
    // The rendered ROA statics, as bird.conf has them.
    const main = await readFile(join(dir, 'bird/bird.conf'), 'utf8');
    const roaStatics = state.bird.rpki.mode === 'off' ? '' : /^protocol static roa_v4[\s\S]*?^}\n\nprotocol static roa_v6[\s\S]*?^}\n/m.exec(main)![0];
    await writeFile(
      conf,
      `router id 10.0.0.1;\ninclude "${dir}/bird/filters.conf";\nprotocol device {}\n${roaStatics}\n${probe('ipv4', V4)}${probe('ipv6', V6)}`,
    );
    const bird = await spawnBird(conf, join(dir, 'probe.ctl'));
    const birdc = async (...args: string[]) => (await run('birdc', ['-s', bird.socket, ...args])).stdout;
    try {
      if (state.bird.rpki.mode !== 'off') {
        await eventually(async () => (await birdc('show', 'route', 'table', 'dn42_roa_v4', 'count')).includes('3 of 3 routes'), {
          timeoutMs: 20_000,
          what: 'the ROA table filled',
        });
        // The probes may have been filtered before the ROA statics filled the tables: import them again.
        await birdc('reload', 'probe_ipv4');
        await birdc('reload', 'probe_ipv6');
      }
      return await body(birdc);
    } finally {
      await bird.stop();
    }
  });
}

const prefixesIn = (text: string) => [...text.matchAll(/^(\S+\/\d+)\s+unreachable/gm)].map((m) => m[1]).sort();

describe('agent render: RPKI (ROA tables and roa_check)', function () {
  this.timeout(60_000);

  for (const mode of ['reject_invalid', 'observe', 'off'] as const) {
    it(`${mode}: bird -p -c accepts the configuration, with a ROA set and without one`, async () => {
      for (const roas of [ROAS, null]) await renderedInTempDir(inputs(withMode(mode), roas), (dir) => expectBirdAccepts(join(dir, 'bird/bird.conf')));
    });
  }

  it('reject_invalid: ROA tables, the ROA files included by bird.conf, and roa_check in both eBGP import checks', () => {
    const f = files(withMode('reject_invalid'));
    expect(f.get('bird/filters.conf')).to.include('roa4 table dn42_roa_v4;\nroa6 table dn42_roa_v6;');
    expect(f.get('bird/filters.conf')).to.include('if roa_check(dn42_roa_v4, net, bgp_path.last) = ROA_INVALID then return false;');
    expect(f.get('bird/filters.conf')).to.include('if roa_check(dn42_roa_v6, net, bgp_path.last) = ROA_INVALID then return false;');
    expect(f.get('bird/bird.conf')).to.include('protocol static roa_v4 {\n\troa4 { table dn42_roa_v4; };\n\tinclude "/r/bird/roa_v4.conf";\n}');
    expect(f.get('bird/roa_v4.conf')).to.equal(
      '# dn42-agent: 3 ipv4 ROAs of dn42 registry commit c0ffee, rendered; the next apply overwrites it.\n' +
        'route 172.20.8.0/22 max 24 as 4242420002;\nroute 172.20.16.0/24 max 24 as 4242420002;\nroute 172.20.16.0/24 max 24 as 4242420003;\n',
    );
    expect(f.get('bird/roa_v6.conf')).to.match(/\nroute fd42:4242:1::\/48 max 48 as 4242420002;\n$/);
  });

  it('observe: ROA tables and files, no roa_check; off: none of it', () => {
    const observe = files(withMode('observe'));
    expect(observe.get('bird/filters.conf')).to.include('roa4 table dn42_roa_v4;');
    expect(observe.get('bird/filters.conf')).not.to.include('roa_check');
    expect(observe.has('bird/roa_v6.conf')).to.equal(true);
    const off = files(withMode('off'));
    expect([...off.values()].join('\n')).not.to.match(/roa_check|roa4 table|roa_v4/);
    expect(off.has('bird/roa_v4.conf')).to.equal(false);
  });

  it('without a ROA set fetched yet the ROA files hold no route, so nothing is rejected as invalid', () => {
    expect(files(withMode('reject_invalid'), null).get('bird/roa_v4.conf')).to.equal(
      '# dn42-agent: no ROA set fetched yet; the table stays empty (every route ROA_UNKNOWN).\n',
    );
  });

  it('the default mode (a document without bird.rpki) is reject_invalid', () => {
    const state = policy();
    expect(state.bird.rpki).to.deep.equal({ mode: 'reject_invalid' });
  });

  it('a real BIRD: reject_invalid drops ROA-invalid routes on eBGP import (wrong origin, beyond max-length), keeps valid and not-found ones', () =>
    withBird(withMode('reject_invalid'), async (birdc) => {
      const keep = (rows: [string, number, RpkiState][]) =>
        rows
          .filter(([, , s]) => s !== 'invalid')
          .map(([p]) => p)
          .sort();
      await eventually(async () => expect(prefixesIn(await birdc('show', 'route', 'protocol', 'probe_ipv4'))).to.deep.equal(keep(V4)) && true, {
        timeoutMs: 15_000,
      });
      await eventually(async () => expect(prefixesIn(await birdc('show', 'route', 'protocol', 'probe_ipv6'))).to.deep.equal(keep(V6)) && true, {
        timeoutMs: 15_000,
      });
    }));

  it("a real BIRD: observe keeps every route, and BIRD's roa_check gives each route the state the agent computes", () =>
    withBird(withMode('observe'), async (birdc) => {
      const index = new RoaIndex(ROAS.roas);
      for (const [family, rows] of [['v4', V4] as const, ['v6', V6] as const]) {
        const probe = `probe_${family === 'v4' ? 'ipv4' : 'ipv6'}`;
        await eventually(async () => expect(prefixesIn(await birdc('show', 'route', 'protocol', probe))).to.have.length(rows.length) && true, {
          timeoutMs: 15_000,
        });
        for (const [state, word] of [
          ['valid', 'ROA_VALID'],
          ['invalid', 'ROA_INVALID'],
          ['not_found', 'ROA_UNKNOWN'],
        ] as const) {
          const shown = prefixesIn(await birdc('show', 'route', 'protocol', probe, 'where', `roa_check(dn42_roa_${family}, net, bgp_path.last) = ${word}`));
          const expected = rows
            .filter(([, , s]) => s === state)
            .map(([p]) => p)
            .sort();
          expect(shown, `BIRD ${word} (${family})`).to.deep.equal(expected);
          expect(
            rows
              .filter(([p, o]) => index.state(p, o) === state)
              .map(([p]) => p)
              .sort(),
            `agent ${state} (${family})`,
          ).to.deep.equal(expected);
        }
      }
    }));
});
