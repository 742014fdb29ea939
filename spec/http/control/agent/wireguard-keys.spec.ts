import { expect } from 'chai';
import { registerWireguardKey } from '../../../../commands/wireguard-keys.js';
import { NotFound } from '../../../../domain/errors.js';
import { nodeStream } from '../../../../domain/node/events.js';
import { desiredStateStream } from '../../../../domain/desired-state/events.js';
import { issueAgentToken } from '../../../support/agents.js';
import { api, expectResponse } from '../../../support/http.js';
import { ADMIN_TOKEN, node, wg } from '../fleet/support.js';
import { anonymous, startAgents, type AgentHarness } from './telemetry-support.js';

const KEY_A = 'aQzQn6qN5m0y0VZ8mY0aQkqf1mN0s2m0oQv0a8m0aE0=';
const KEY_OTHER = 'bQzQn6qN5m0y0VZ8mY0aQkqf1mN0s2m0oQv0a8m0aE0=';

/** An internal tunnel on `from` towards `to`, without a peer key of its own: the key comes from `to`'s agent. */
async function internalLink(h: AgentHarness, from: string, to: string, port: number): Promise<void> {
  const peering = await h.admin.post(`/admin/nodes/${from}/peerings`, { name: `to-${to}`, remote_asn: 4242420001, remote_node_id: to, is_internal: true });
  expectResponse(peering).status(201);
  const iface = await h.admin.post(`/admin/nodes/${from}/interfaces`, {
    spec: wg(`int_${to}`, port, { peer: { endpoint: `${to}.example.net:${port}` }, peer_link_local: undefined }),
    peering_id: peering.body.id,
  });
  expectResponse(iface).status(201);
}

describe('POST /agent/wireguard-keys', function () {
  this.timeout(30_000);
  let h: AgentHarness;

  const post = (body: unknown, client = h.agent.a) => client.post('/agent/wireguard-keys', body);
  const generation = async (id: string) => (await h.admin.get(`/admin/nodes/${id}`)).body.current_generation as number;
  const peerKey = async (id: string) => (await h.admin.get(`/admin/nodes/${id}/desired-state`)).body.state.interfaces[0].peer.public_key;

  before(async () => {
    h = await startAgents(['a', 'b', 'c', 'd']);
    await internalLink(h, 'b', 'a', 52801);
    await internalLink(h, 'c', 'a', 52802);
    // d points at a too, but its peering is disabled: its desired state does not read a's key.
    await internalLink(h, 'd', 'a', 52803);
    const d = (await h.admin.get('/admin/nodes/d/peerings')).body[0];
    expectResponse(await h.admin.patch(`/admin/peerings/${d.id}`, { enabled: false })).status(200);
  });
  after(async () => h?.close());

  it('stores the first key and re-materialises, in the same append, the nodes whose internal peerings point here', async () => {
    const before = { a: await generation('a'), b: await generation('b'), c: await generation('c'), d: await generation('d') };
    expect(await peerKey('b')).to.equal(null);
    h.sys.broadcaster.calls.length = 0;

    const res = await post({ node_id: 'a', public_key: KEY_A, private_key_escrow: 'escrow-1' });
    expectResponse(res).status(200);
    expect(res.body).to.deep.equal({ node_id: 'a', accepted: true, status: 'stored', propagated_to: ['b', 'c'] });

    expect(await generation('b')).to.equal(before.b + 1);
    expect(await generation('c')).to.equal(before.c + 1);
    expect(await generation('d')).to.equal(before.d);
    expect(await generation('a')).to.equal(before.a);
    expect(await peerKey('b')).to.equal(KEY_A);
    expect(await peerKey('c')).to.equal(KEY_A);
    expect((await h.admin.get('/admin/nodes/a')).body.wireguard_public_key).to.equal(KEY_A);
    expect(h.sys.broadcaster.published.map((p) => [p.node_id, p.generation])).to.deep.equal([
      ['b', before.b + 1],
      ['c', before.c + 1],
    ]);

    // One append: the key event and both publications carry one transaction position.
    const [keyEvent] = (await h.sys.store.readStream(nodeStream('a'))).filter((e) => e.type === 'WireguardKeyRegistered');
    const [pubB] = (await h.sys.store.readStream(desiredStateStream('b'))).slice(-1);
    expect(keyEvent.position.tx).to.equal(pubB.position.tx);
    expect(keyEvent.data).to.deep.equal({ node_id: 'a', public_key: KEY_A, private_key_escrow: 'escrow-1' });
  });

  it('answers the same key with matched, publishes nothing, and refreshes a changed escrow', async () => {
    const gens = [await generation('b'), await generation('c')];
    const version = await h.sys.store.streamVersion(nodeStream('a'));

    const same = await post({ node_id: 'a', public_key: KEY_A });
    expect(same.body).to.deep.equal({ node_id: 'a', accepted: true, status: 'matched', propagated_to: [] });
    expect(await h.sys.store.streamVersion(nodeStream('a'))).to.equal(version);

    const refreshed = await post({ node_id: 'a', public_key: KEY_A, private_key_escrow: 'escrow-2' });
    expect(refreshed.body).to.deep.equal({ node_id: 'a', accepted: true, status: 'matched', propagated_to: [] });
    const events = await h.sys.store.readStream(nodeStream('a'));
    expect(events.length - 1).to.equal(version + 1);
    expect(events[events.length - 1]).to.deep.include({ type: 'WireguardKeyEscrowRefreshed', data: { node_id: 'a', private_key_escrow: 'escrow-2' } });
    expect([await generation('b'), await generation('c')]).to.deep.equal(gens);
  });

  it('rejects another key with 409 and changes nothing', async () => {
    const gens = [await generation('a'), await generation('b'), await generation('c')];
    const version = await h.sys.store.streamVersion(nodeStream('a'));

    const res = await post({ node_id: 'a', public_key: KEY_OTHER, private_key_escrow: 'escrow-3' });
    expectResponse(res).status(409).detail('wireguard public key of node a does not match the registered key');
    expect(res.body).to.deep.equal({
      node_id: 'a',
      accepted: false,
      status: 'rejected',
      detail: 'wireguard public key of node a does not match the registered key',
      propagated_to: [],
    });

    expect(await h.sys.store.streamVersion(nodeStream('a'))).to.equal(version);
    expect([await generation('a'), await generation('b'), await generation('c')]).to.deep.equal(gens);
    expect((await h.admin.get('/admin/nodes/a')).body.wireguard_public_key).to.equal(KEY_A);
    expect(await peerKey('b')).to.equal(KEY_A);
  });

  it('refuses another node, a missing token and a malformed key', async () => {
    expectResponse(await post({ node_id: 'b', public_key: KEY_A })).status(403);
    expectResponse(await anonymous(h).post('/agent/wireguard-keys', { node_id: 'a', public_key: KEY_A })).status(401);
    expectResponse(await post({ node_id: 'a', public_key: 'not-a-key' })).status(422);
    expectResponse(await post({ node_id: 'a', public_key: KEY_A, extra: 1 })).status(422);
  });

  it('has no key to take for a node that no longer exists: its token stops resolving (401), the command says unknown node (404)', async () => {
    expectResponse(await h.admin.post('/admin/nodes', node('gone'))).status(201);
    const { token } = await issueAgentToken(h.url, ADMIN_TOKEN, 'gone');
    expectResponse(await h.admin.delete('/admin/nodes/gone')).status(204);
    expectResponse(await post({ node_id: 'gone', public_key: KEY_A }, api(`${h.url}/control/v1`, { token }))).status(401);
    const deps = { store: h.sys.store, db: h.sys.pool, doorbell: h.sys.doorbell };
    const err = await registerWireguardKey(deps, 'gone', KEY_A, null, { actor: 'spec' }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).to.be.instanceOf(NotFound);
    expect((err as Error).message).to.equal('unknown node gone');
  });
});
