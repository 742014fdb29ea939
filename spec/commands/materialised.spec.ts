import { expect } from 'chai';
import { fold } from '../../domain/decider.js';
import { dnsGroupDecider } from '../../domain/dns/decide.js';
import type { DnsGroupEvent } from '../../domain/dns/events.js';
import { groupFieldsOf, recordFieldsOf, zoneFieldsOf } from '../../domain/dns/specs.js';
import type { ActiveDnsGroup } from '../../domain/dns/state.js';
import type { FleetContext } from '../../domain/desired-state/context.js';
import type { LiveNode } from '../../domain/node/state.js';
import { materialise } from '../../domain/desired-state/materialise.js';
import { validateDesiredState } from '../../domain/desired-state/schema.js';
import { Validation } from '../../domain/errors.js';
import { checkedDocument, materialised } from '../../commands/materialised.js';
import { jsonBatch, withJsonText } from '../../infra/db/json-batch.js';
import { context, facts, iface, key, liveNode, peering, session } from '../domain/desired-state/fixtures.js';

/** A group with one zone and `records` A records, folded from the decider's own events. */
function groupWith(records: number): ActiveDnsGroup {
  const commands: Parameters<typeof dnsGroupDecider.decide>[0][] = [
    { type: 'CreateGroup', group_id: 3, group: groupFieldsOf({ name: 'anycast', bind_addresses: ['172.20.0.53'] }) },
    { type: 'CreateZone', group_id: 3, zone_id: 20, zone: zoneFieldsOf({ zone: 'example.dn42' }) },
  ];
  for (let i = 0; i < records; i++)
    commands.push({
      type: 'CreateRecord',
      group_id: 3,
      zone_id: 20,
      record_id: 200 + i,
      record: recordFieldsOf({ name: `r${i}`, type: 'A', content: `172.20.1.${i + 1}` }),
    });
  const events: DnsGroupEvent[] = [];
  for (const command of commands) events.push(...dnsGroupDecider.decide(command, fold(dnsGroupDecider, events)));
  return fold(dnsGroupDecider, events) as ActiveDnsGroup;
}

/** A member with an internal link to `ber1` (its key comes from the facts) and an external session. */
const member = (nodeId: string): LiveNode => ({
  ...liveNode(
    {},
    {
      peerings: [peering(1, { is_internal: true, remote_node_id: 'ber1' }), peering(2)],
      interfaces: [iface(1, { listen_port: 20001 }, { peering_id: 1 }), iface(2, { listen_port: 20002 }, { peering_id: 2 })],
      sessions: [session(2, {}, { peering_id: 2 })],
    },
  ),
  node_id: nodeId,
});

/** What a publication made the whole way gives: materialised, then checked. */
const whole = (node: LiveNode, ctx: FleetContext) => checkedDocument(materialise(node, ctx), ctx.agent_version);

describe('materialised documents', () => {
  const ctxOf = (group: ActiveDnsGroup | null, agent_version: string | null = '1.0.300') =>
    context([facts('ber1', { wireguard_public_key: key('B') })], { dns_group: group, agent_version, wireguard_public_key: key('F') });

  it('gives the document of materialise and validation, and its text byte for byte, on a first and on a repeated write', () => {
    const node = member('m-text-1');
    const first = materialised(node, ctxOf(groupWith(0)));
    for (const records of [1, 2, 3]) {
      const ctx = ctxOf(groupWith(records));
      const made = materialised(node, ctx);
      // Made again from its last document: the same section objects.
      expect(made.state.bird).to.equal(first.state.bird);
      expect(made.state).to.deep.equal(whole(node, ctx));
      expect(made.text).to.equal(JSON.stringify(made.state));
      expect(made.text).to.equal(JSON.stringify(whole(node, ctx)));
    }
  });

  it('makes a node again when its state or a fact of its context changed', () => {
    const node = member('m-facts-1');
    const group = groupWith(1);
    materialised(node, ctxOf(group));
    const older = ctxOf(group, null);
    expect(materialised(node, older).text).to.equal(JSON.stringify(whole(node, older)));
    const moved = context([facts('ber1', { wireguard_public_key: key('C') })], { dns_group: group, agent_version: null, wireguard_public_key: key('F') });
    const made = materialised(node, moved);
    expect(made.text).to.equal(JSON.stringify(whole(node, moved)));
    expect(made.text).to.include(key('C'));
    const changed = { ...node, fields: { ...node.fields, site: 'ber' } };
    expect(materialised(changed, moved).text).to.equal(JSON.stringify(whole(changed, moved)));
  });

  it('follows the group leaving, being disabled and coming back', () => {
    const node = member('m-group-1');
    const group = groupWith(2);
    for (const g of [group, null, { ...group, enabled: false }, group]) {
      const made = materialised(node, ctxOf(g));
      expect(made.text).to.equal(JSON.stringify(whole(node, ctxOf(g))));
    }
  });

  it('refuses a group whose section fails the schema with the errors of the whole document', () => {
    const node = member('m-bad-1');
    materialised(node, ctxOf(groupWith(1)));
    const bad = { ...groupWith(1), cache_ttl_seconds: -1 };
    const expected = validateDesiredState(materialise(node, ctxOf(bad)));
    expect(expected.ok).to.equal(false);
    expect(() => materialised(node, ctxOf(bad)))
      .to.throw(Validation)
      .that.satisfies((err: Validation) => JSON.stringify(err.errors) === JSON.stringify((expected as { errors: unknown }).errors));
  });
});

describe('jsonBatch with texts made by the writer', () => {
  it('sends the given text instead of serialising the value again', () => {
    const value = withJsonText({ a: 1 }, '{"a":1}');
    const batch = jsonBatch([value, { b: 2 }]);
    expect(batch.texts).to.deep.equal(['{"a":1}', '{"b":2}']);
    expect(batch.bytes.toString('utf8')).to.equal('{"a":1}{"b":2}');
  });
});
