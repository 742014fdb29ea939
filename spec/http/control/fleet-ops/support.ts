import { expect } from 'chai';
import type { TestSystem } from '../../../support/system.js';
import { expectResponse } from '../../../support/http.js';
import { bgp, node, wg, type Client } from '../fleet/support.js';

export { bgp, node, wg };

/** A syntactically valid WireGuard public key made of one letter. */
export const key = (letter: string): string => `${letter.repeat(42)}A=`;

/** Every event in the store but the audit log's (a dry run must not add one; its request is audited like any admin POST). */
export async function eventCount(sys: TestSystem): Promise<number> {
  return (await sys.pool.query(`SELECT count(*)::int AS n FROM events WHERE stream_id NOT LIKE 'audit-%'`)).rows[0].n;
}

/** How many transactions published generations with this reason, and how many generations. */
export async function publications(sys: TestSystem, reason: string): Promise<{ appends: number; generations: number }> {
  const { rows } = await sys.pool.query(
    `SELECT count(DISTINCT tx_id)::int AS appends, count(*)::int AS generations FROM events WHERE type = 'DesiredStatePublished' AND data ->> 'reason' = $1`,
    [reason],
  );
  return rows[0];
}

export async function desiredState(client: Client, nodeId: string): Promise<Record<string, any>> {
  const res = await client.get(`/admin/nodes/${nodeId}/desired-state`);
  expectResponse(res).status(200);
  return res.body.state;
}

export async function generationOf(client: Client, nodeId: string): Promise<number> {
  return (await client.get(`/admin/nodes/${nodeId}`)).body.current_generation;
}

/** An internal link end: its own addresses, a fixed port, and the remote end to dial. */
export const internalSpec = (name: string, listen_port: number, endpoint: string, extra: Record<string, unknown> = {}) => ({
  name,
  kind: 'wireguard',
  listen_port,
  addresses: ['fe80::a:1/64'],
  peer: { endpoint, ...extra },
});

/**
 * A legacy internal link between two nodes: each end listens on a port of the
 * external pool (allowed while the peering was still marked external) and pins
 * a peer key; then both peerings become internal, as an operator PATCH does.
 */
export async function legacyInternalLink(client: Client, a: string, b: string, ports: [number, number]): Promise<void> {
  for (const [local, remote, port, dial, pin] of [
    [a, b, ports[0], ports[1], key('O')],
    [b, a, ports[1], ports[0], key('P')],
  ] as const) {
    const peering = await client.post(`/admin/nodes/${local}/peerings`, { name: `link-${remote}`, remote_asn: 4242420001, remote_node_id: remote });
    expectResponse(peering).status(201);
    const spec = internalSpec(`to-${remote}`, port, `${remote}.example.net:${dial}`, { public_key: pin });
    expectResponse(await client.post(`/admin/nodes/${local}/interfaces`, { spec, peering_id: peering.body.id })).status(201);
    expectResponse(await client.patch(`/admin/peerings/${peering.body.id}`, { is_internal: true })).status(200);
  }
  const ifaces: { name: string; spec: { listen_port: number } }[] = (await client.get(`/admin/nodes/${a}/interfaces`)).body;
  expect(ifaces.find((i) => i.name === `to-${b}`)?.spec.listen_port, 'the legacy port outside the internal pool').to.equal(ports[0]);
}
