// The fleet shape the write and console benchmarks seed through the write
// commands (no HTTP): each node with external peerings, then an internal mesh to
// its ring neighbours, every peering with a WireGuard interface and one BGP session.
import { writeNode } from '../commands/fleet-write.js';
import { nextIds } from '../commands/ids.js';
import { peeringRecord } from '../commands/peerings.js';
import { decideAll, type NodeCommand } from '../domain/node/decide.js';
import { fleetDeps } from '../http/control/fleet/common.js';
import type { TestSystem } from '../spec/support/system.js';

const PUBLIC_KEY = 'wQzQn6qN5m0y0VZ8mY0aQkqf1mN0s2m0oQv0a8m0aE0=';
const BASE_TEMPLATE = { runtime: { wireguard_port_range: '20000-29999' } };

export const nodeId = (i: number) => `n${String(i).padStart(4, '0')}`;

/** A node's fields; `i` makes its addresses unique (up to 65,000 nodes). */
export function nodeFields(i: number) {
  const hi = Math.floor(i / 250);
  const lo = (i % 250) + 1;
  return {
    asn: 4242420001,
    router_id: `172.20.${hi}.${lo}`,
    site: `site${i % 20}`,
    loopback_ipv4: `172.20.${hi}.${lo}`,
    loopback_ipv6: `fd42:4242:${(i + 1).toString(16)}::1`,
    link_local: 'fe80::1',
    ipv4_prefixes: [],
    ipv6_prefixes: [],
    base_template: BASE_TEMPLATE,
  };
}

export const wg = (name: string, port: number, addresses?: string[]) => ({
  name,
  kind: 'wireguard',
  listen_port: port,
  ...(addresses ? { addresses } : {}),
  peer: { public_key: PUBLIC_KEY, endpoint: `${name}.example.net:51820` },
  peer_link_local: 'fe80::2',
});

/** Runs `work` over 0..count-1 with at most `parallel` at a time. */
export async function inBatches(count: number, parallel: number, work: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(parallel, count) }, async () => {
      while (next < count) await work(next++);
    }),
  );
}

export interface SeedOptions {
  /** Remote AS of node i's external peering k (default 4242421000 + k: the same 6 ASes on every node). */
  externalAsn?: (i: number, k: number) => number;
}

/**
 * Seeds `count` nodes through the write commands: first every node with its 6
 * external peerings, then every node's internal mesh (ring neighbours ±1, ±2),
 * published in the same write. 10 sessions per node.
 */
export async function seedFleet(sys: TestSystem, count: number, options: SeedOptions = {}): Promise<void> {
  const deps = fleetDeps(sys.context);
  const meta = { actor: 'bench' };
  const EXTERNAL = 6;
  const neighbours = (i: number) => [...new Set([1, 2, count - 1, count - 2].map((d) => (i + d) % count))].filter((j) => j !== i);
  const peeringsOf = async (
    i: number,
    remote: (k: number) => { name: string; remote_asn: number; remote_node_id?: string; is_internal?: boolean },
    n: number,
    firstPort: number,
  ) => {
    const [peeringIds, interfaceIds, sessionIds] = [
      await nextIds(deps.db, 'peering', n),
      await nextIds(deps.db, 'interface', n),
      await nextIds(deps.db, 'bgp_session', n),
    ];
    const commands: NodeCommand[] = [];
    for (let k = 0; k < n; k++) {
      const input = remote(k);
      const ifname = `${input.is_internal ? 'int' : 'ext'}${k}`;
      commands.push(
        { type: 'CreatePeering', node_id: nodeId(i), peering: peeringRecord(peeringIds[k], input), remoteExists: true },
        {
          type: 'CreateInterface',
          node_id: nodeId(i),
          interface: {
            id: interfaceIds[k],
            peering_id: peeringIds[k],
            spec: wg(ifname, firstPort + k, input.is_internal ? ['fe80::1/64'] : undefined) as never,
            enabled: true,
            sort_order: k,
          },
        },
        {
          type: 'CreateSession',
          node_id: nodeId(i),
          session: {
            id: sessionIds[k],
            peering_id: peeringIds[k],
            spec: { name: ifname, remote_asn: input.remote_asn, neighbor_address: 'fe80::2', interface: ifname } as never,
            sort_order: k,
          },
        },
      );
    }
    return commands;
  };
  await inBatches(count, 6, async (i) => {
    const externals = await peeringsOf(i, (k) => ({ name: `ext${k}`, remote_asn: options.externalAsn?.(i, k) ?? 4242421000 + k }), EXTERNAL, 21000);
    await writeNode(
      deps,
      nodeId(i),
      (state) => ({
        events: decideAll([{ type: 'CreateNode', node_id: nodeId(i), fields: nodeFields(i) }, ...externals], state).events,
        reason: 'seed',
        publish: 'none',
        result: undefined,
      }),
      meta,
    );
  });
  await inBatches(count, 6, async (i) => {
    const ring = neighbours(i);
    const internals = await peeringsOf(
      i,
      (k) => ({ name: `int-${nodeId(ring[k])}`, remote_asn: 4242420001, remote_node_id: nodeId(ring[k]), is_internal: true }),
      ring.length,
      22000,
    );
    await writeNode(
      deps,
      nodeId(i),
      (state) => ({ events: decideAll(internals, state).events, reason: 'seed mesh', publish: 'always', result: undefined }),
      meta,
    );
  });
}
