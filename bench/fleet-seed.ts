// The fleet shape the write and console benchmarks seed in bulk through the
// write path's parts (no HTTP, many nodes per append): each node with external
// peerings, then an internal mesh to its ring neighbours, every peering with a
// WireGuard interface and one BGP session.
import { FleetLoader, publication, type Published } from '../commands/fleet-write.js';
import { afterCommit, guardedLoads, publishingLocks } from '../commands/node-write.js';
import { execute } from '../commands/handle.js';
import { nextIds } from '../commands/ids.js';
import { peeringRecord } from '../domain/node/provision.js';
import { fold, type DomainEvent } from '../domain/decider.js';
import { decideAll, nodeDecider, type NodeCommand } from '../domain/node/decide.js';
import { nodeStream, type NodeEvent } from '../domain/node/events.js';
import type { NodeState } from '../domain/node/state.js';
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
  /** Nodes per append (default `SEED_CHUNK`). */
  chunk?: number;
}

/** Nodes per append while seeding. */
const SEED_CHUNK = 250;

/**
 * Seeds `count` nodes in bulk through the write path's own parts, `SEED_CHUNK`
 * nodes per append (one transaction, the inline projections in it), so the
 * events and read-model rows are exactly what the write commands produce:
 *
 * 1. every node with its 6 external peerings (`CreateNode` and `CreatePeering`,
 *    `CreateInterface`, `CreateSession` decided by `decideAll`, as `writeNode`
 *    would), one append of many node streams;
 * 2. every node's internal mesh (ring neighbours ±1, ±2), decided the same way
 *    and published in the same append by the write pipeline's steps (`guardedLoads`, `publication`, `afterCommit`)
 *    (materialised with `FleetLoader`, validated): each node's generation 1.
 *
 * Ids come from the same sequences (`nextIds`), a chunk's worth per query.
 * 10 sessions per node. What is not the same as `count` separate writes: a node's
 * first document already sees the internal peerings of the nodes published in
 * the same chunk (one write per node would publish before its later neighbours
 * pointed at it); every timed write re-materialises from the streams anyway.
 */
export async function seedFleet(sys: TestSystem, count: number, options: SeedOptions = {}): Promise<void> {
  const deps = fleetDeps(sys.context);
  const meta = { actor: 'bench' };
  const EXTERNAL = 6;
  const neighbours = (i: number) => [...new Set([1, 2, count - 1, count - 2].map((d) => (i + d) % count))].filter((j) => j !== i);
  interface RemoteIn {
    name: string;
    remote_asn: number;
    remote_node_id?: string;
    is_internal?: boolean;
  }
  /** Peering, interface and session commands of the nodes `nodes`, each with `n(i)` peerings, ids reserved in one query per kind. */
  const peeringsOf = async (nodes: readonly number[], n: (i: number) => number, remote: (i: number, k: number) => RemoteIn, firstPort: number) => {
    const total = nodes.reduce((sum, i) => sum + n(i), 0);
    const [peeringIds, interfaceIds, sessionIds] = [
      await nextIds(deps.db, 'peering', total),
      await nextIds(deps.db, 'interface', total),
      await nextIds(deps.db, 'bgp_session', total),
    ];
    let next = 0;
    const out = new Map<number, NodeCommand[]>();
    for (const i of nodes) {
      const commands: NodeCommand[] = [];
      for (let k = 0; k < n(i); k++, next++) {
        const input = remote(i, k);
        const ifname = `${input.is_internal ? 'int' : 'ext'}${k}`;
        commands.push(
          { type: 'CreatePeering', node_id: nodeId(i), peering: peeringRecord(peeringIds[next], input), remoteExists: true },
          {
            type: 'CreateInterface',
            node_id: nodeId(i),
            interface: {
              id: interfaceIds[next],
              peering_id: peeringIds[next],
              spec: wg(ifname, firstPort + k, input.is_internal ? ['fe80::1/64'] : undefined) as never,
              enabled: true,
              sort_order: k,
            },
          },
          {
            type: 'CreateSession',
            node_id: nodeId(i),
            session: {
              id: sessionIds[next],
              peering_id: peeringIds[next],
              spec: { name: ifname, remote_asn: input.remote_asn, neighbor_address: 'fe80::2', interface: ifname } as never,
              sort_order: k,
            },
          },
        );
      }
      out.set(i, commands);
    }
    return out;
  };
  const chunks: number[][] = [];
  const size = options.chunk ?? SEED_CHUNK;
  for (let start = 0; start < count; start += size) chunks.push(Array.from({ length: Math.min(size, count - start) }, (_, k) => start + k));

  for (const chunk of chunks) {
    const externals = await peeringsOf(
      chunk,
      () => EXTERNAL,
      (i, k) => ({ name: `ext${k}`, remote_asn: options.externalAsn?.(i, k) ?? 4242421000 + k }),
      21000,
    );
    const streams = chunk.map((i) => nodeStream(nodeId(i)));
    await execute(
      deps.store,
      streams,
      (loaded) => ({
        writes: chunk.map((i, k) => {
          const state = fold(nodeDecider, loaded[streams[k]].events as NodeEvent[]);
          if (state.status === 'Live') throw new Error(`seed: node ${nodeId(i)} exists already`);
          return {
            streamId: streams[k],
            events: decideAll([{ type: 'CreateNode', node_id: nodeId(i), fields: nodeFields(i) }, ...externals.get(i)!], state).events,
          };
        }),
        result: undefined,
      }),
      meta,
      { lockWritten: false },
    );
  }
  for (const chunk of chunks) {
    const internals = await peeringsOf(
      chunk,
      (i) => neighbours(i).length,
      (i, k) => {
        const remote = nodeId(neighbours(i)[k]);
        return { name: `int-${remote}`, remote_asn: 4242420001, remote_node_id: remote, is_internal: true };
      },
      22000,
    );
    const streams = chunk.map((i) => nodeStream(nodeId(i)));
    const executed = await execute(
      deps.store,
      streams,
      async (loaded, load) => {
        const { more, guards } = guardedLoads(load);
        const after = new Map<string, NodeState>();
        const writes: { streamId: string; events: NodeEvent[] }[] = [];
        for (const [k, i] of chunk.entries()) {
          const decided = decideAll(internals.get(i)!, fold(nodeDecider, loaded[streams[k]].events as NodeEvent[]));
          after.set(nodeId(i), decided.state);
          writes.push({ streamId: streams[k], events: decided.events });
        }
        const loader = new FleetLoader(deps.db, more, after);
        await loader.prefetch([...after.keys()]);
        const published: Published[] = [];
        const publications: { streamId: string; events: DomainEvent[] }[] = [];
        for (const node of after.values()) {
          if (node.status !== 'Live') throw new Error('seed: a node of the chunk is not live');
          const next = await publication(loader, node, 'seed mesh');
          published.push(next.published);
          publications.push(next.write);
        }
        return { writes: guards([...writes, ...publications]), result: { result: undefined, published } };
      },
      meta,
      { locks: publishingLocks(streams) },
    );
    await afterCommit(deps, executed);
  }
}
