import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'chai';
import type { DesiredState } from '../../../domain/desired-state/schema.js';
import { spawnBird } from '../support/bird-process.js';
import { eventually } from '../../support/wait.js';
import { policy } from './cases.js';
import { PRIVATE_KEYS, renderedInTempDir, run } from './support.js';

/**
 * The rendered filters, run by a real BIRD: a daemon (own control socket, no
 * kernel, no BGP) loads `bird/filters.conf` and a static protocol whose import
 * filter is the session's own named filter. The routes that reach the table,
 * and their attributes, are what the session would accept from a peer.
 */

interface Probe {
  /** Static routes as BIRD lines: `route 172.20.8.0/24 unreachable { bgp_community.add((64511, 44)); };`. */
  routes: string[];
  filter: string;
  family: 'ipv4' | 'ipv6';
  /** The static's name; `own_v4` makes the routes look originated by the node (what the export filters send). */
  name?: string;
}

const route = (prefix: string, ...statements: string[]) => `route ${prefix} unreachable${statements.length ? ` { ${statements.join(' ')} }` : ''};`;
const path = (length: number) => Array.from({ length }, () => 'bgp_path.prepend(4242420002);');

/** Table entries by prefix: the route line and its attribute lines. */
function parseRoutes(text: string): Map<string, string> {
  const routes = new Map<string, string>();
  let current: string | null = null;
  for (const line of text.split('\n')) {
    const m = /^(\S+\/\d+)\s+unreachable/.exec(line);
    if (m) routes.set((current = m[1]), line);
    else if (current && /^\s/.test(line)) routes.set(current, `${routes.get(current)}\n${line.trim()}`);
  }
  return routes;
}

async function evaluate(state: DesiredState, probe: Probe): Promise<Map<string, string>> {
  return renderedInTempDir({ state, wireguardPrivateKey: PRIVATE_KEYS.fra1, kernel: false }, async (dir) => {
    const conf = join(dir, 'probe.conf');
    const name = probe.name ?? 'probe';
    await writeFile(
      conf,
      `router id 10.0.0.1;\ninclude "${dir}/bird/filters.conf";\nprotocol device {}\nprotocol static ${name} {\n\t${probe.family} { import filter ${probe.filter}; };\n\t${probe.routes.join('\n\t')}\n}\n`,
    );
    const bird = await spawnBird(conf, join(dir, 'probe.ctl'));
    try {
      // Until the static protocol is up (a probe that never comes up shows no routes below).
      await eventually(async () => /\sup\s/.test((await run('birdc', ['-s', bird.socket, 'show', 'protocols', name])).stdout), { everyMs: 100 }).catch(
        () => {},
      );
      const shown = await run('birdc', ['-s', bird.socket, 'show', 'route', 'all', 'protocol', name]);
      return parseRoutes(shown.stdout);
    } finally {
      await bird.stop();
    }
  });
}

describe('agent render: BIRD filters evaluated by a real BIRD', function () {
  this.timeout(30_000);

  it('eBGP import (IPv4): dn42 space only, not ours, blocked prefixes by exact match, AS path limit', async () => {
    const table = await evaluate(policy(), {
      filter: 'ebgp_peer_mp_import_v4',
      family: 'ipv4',
      routes: [
        route('172.23.5.0/24'),
        route('172.23.5.0/25'),
        route('172.23.4.0/23'),
        route('172.20.0.0/26'),
        route('172.20.0.32/27'),
        route('192.168.1.0/24'),
        route('172.20.8.0/30'),
        route('172.20.8.0/24'),
        route('10.100.5.0/24'),
        route('172.20.9.0/24', ...path(64)),
        route('172.20.10.0/24', ...path(65)),
      ],
    });
    expect([...table.keys()].sort()).to.deep.equal(['10.100.5.0/24', '172.20.8.0/24', '172.20.9.0/24', '172.23.4.0/23', '172.23.5.0/25']);
  });

  it('eBGP import (IPv6): blocked by exact match, own and non-dn42 space rejected', async () => {
    const table = await evaluate(policy(), {
      filter: 'ebgp_peer_mp_import_v6',
      family: 'ipv6',
      routes: [
        route('fd42:dead::/48'),
        route('fd42:dead::/56'),
        route('fd00:1::/48'),
        route('fd00:1:0:1::/64'),
        route('2001:db8::/48'),
        route('fd42:4242:1::/48'),
        route('fd42:4200::/40'),
      ],
    });
    expect([...table.keys()].sort()).to.deep.equal(['fd42:4242:1::/48', 'fd42:dead::/56']);
  });

  it('eBGP import sets local preference: the session’s, overridden by the first matching route_local_pref', async () => {
    const table = await evaluate(policy(), {
      filter: 'ebgp_peer_mp_import_v4',
      family: 'ipv4',
      routes: [route('172.20.8.0/24'), route('172.22.1.0/24'), route('172.22.200.0/24')],
    });
    expect(table.get('172.20.8.0/24')).to.include('BGP.local_pref: 150');
    expect(table.get('172.22.1.0/24')).to.include('BGP.local_pref: 200');
    expect(table.get('172.22.200.0/24'), 'first match wins over the later /17 rule').to.include('BGP.local_pref: 200');
    const v6 = await evaluate(policy(), { filter: 'ebgp_peer_mp_import_v6', family: 'ipv6', routes: [route('fd42:1000:5::/48')] });
    expect(v6.get('fd42:1000:5::/48')).to.include('BGP.local_pref: 300');
  });

  it('eBGP import keeps the worst latency along the path and adds cold-potato MED to other regions only', async () => {
    const table = await evaluate(policy(), {
      filter: 'ebgp_peer_mp_import_v4',
      family: 'ipv4',
      routes: [
        route('172.20.8.0/24'),
        route('172.20.9.0/24', 'bgp_community.add((64511, 7));', 'bgp_community.add((64511, 44));'),
        route('172.20.10.0/24', 'bgp_community.add((64511, 1));', 'bgp_community.add((64511, 41));'),
        route('172.20.11.0/24', 'bgp_community.add((64511, 44));', 'bgp_med = 10;'),
      ],
    });
    expect(table.get('172.20.8.0/24')).to.include('BGP.community: (64511,3)');
    expect(table.get('172.20.8.0/24')).not.to.include('BGP.med');
    expect(table.get('172.20.9.0/24'), 'latency 7 beats the link’s 3').to.match(/BGP\.community: \(64511,7\) \(64511,44\)$/);
    expect(table.get('172.20.9.0/24')).to.include('BGP.med: 50');
    expect(table.get('172.20.10.0/24')).to.include('BGP.community: (64511,41) (64511,3)');
    expect(table.get('172.20.10.0/24'), 'our own region').not.to.include('BGP.med');
    expect(table.get('172.20.11.0/24')).to.include('BGP.med: 60');
  });

  it('eBGP export: our own dn42 prefixes with the link communities, nothing else from the node', async () => {
    const table = await evaluate(policy(), {
      name: 'own_v4',
      filter: 'ebgp_peer_mp_export_v4',
      family: 'ipv4',
      routes: [route('172.20.0.0/26'), route('192.168.0.0/24')],
    });
    expect([...table.keys()]).to.deep.equal(['172.20.0.0/26']);
    expect(table.get('172.20.0.0/26')).to.include('BGP.community: (64511,3)');
    const other = await evaluate(policy(), { filter: 'ebgp_peer_mp_export_v4', family: 'ipv4', routes: [route('172.20.0.0/26')] });
    expect(other.size, 'a static that is not an origination').to.equal(0);
  });
});
