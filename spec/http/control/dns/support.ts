import { expect } from 'chai';
import type { Client } from '../fleet/support.js';
import { node, wg } from '../fleet/support.js';

export { node, startFleet, type FleetHarness } from '../fleet/support.js';

/** Creates a group and answers its id. */
export async function group(client: Client, name: string, extra: Record<string, unknown> = {}): Promise<number> {
  const res = await client.post('/admin/dns-groups', { name, bind_addresses: ['172.20.0.53'], ...extra });
  expect(res.status, res.text).to.equal(201);
  return res.body.id;
}

/** Creates a zone in the group and answers its id. */
export async function zone(client: Client, groupId: number, name: string, extra: Record<string, unknown> = {}): Promise<number> {
  const res = await client.post(`/admin/dns-groups/${groupId}/zones`, { zone: name, ...extra });
  expect(res.status, res.text).to.equal(201);
  return res.body.zone.id;
}

/** A node with one interface, so it has a first generation (members re-materialise only once published). */
export async function publishedNode(client: Client, nodeId: string, n: number): Promise<void> {
  const created = await client.post('/admin/nodes', node(nodeId, { router_id: `172.20.0.${n}`, loopback_ipv4: `172.20.0.${n}` }));
  expect(created.status, created.text).to.equal(201);
  const iface = await client.post(`/admin/nodes/${nodeId}/interfaces`, { spec: wg('dn42_a', 51800 + n) });
  expect(iface.status, iface.text).to.equal(201);
}
