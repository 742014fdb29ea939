import { Type, type TSchema } from '@sinclair/typebox';
import type { BackfillPlan } from '../../../commands/peerings.js';
import type { NotifyOutcome } from '../../../commands/notify.js';
import type { DiffEntry } from '../../../domain/desired-state/diff.js';
import { InterfaceSpecSchema, SessionSpecSchema } from '../../../domain/node/specs.js';
import type { GenerationInfo, HistoryEntry, InterfaceOut, NodeOut, PeeringFull, PeeringOut, SessionOut } from '../../../projections/fleet/queries.js';
import { component, type Describes } from '../../shared/routes.js';

/**
 * The bodies the fleet routes answer (document 2, "Node", "Peering", "Interface",
 * "BGP session", "Other records"), as shared components of the OpenAPI document.
 * Each is checked against the type the code answers with (`Describes`).
 */

const Nullable = <T extends TSchema>(t: T, description: string) => Type.Union([t, Type.Null()], { description });
const Time = (description: string) => Type.String({ format: 'date-time', description });
const FreeObject = (description: string) => Type.Record(Type.String(), Type.Unknown(), { description });

export const NodeOutSchema = component(
  'NodeOut',
  Type.Object(
    {
      node_id: Type.String({ description: 'unique node id, 1 to 64 characters' }),
      asn: Type.Integer({ minimum: 1, description: 'AS number of the node' }),
      router_id: Type.String({ description: 'BGP router id' }),
      site: Nullable(Type.String(), 'city code, null when not set'),
      loopback_ipv4: Nullable(Type.String(), 'IPv4 loopback address, null when not set'),
      loopback_ipv6: Nullable(Type.String(), 'IPv6 loopback address, null when not set'),
      link_local: Nullable(Type.String(), 'IPv6 link-local address (fe80::/10, no `%zone`) from which external WireGuard interface addresses are derived'),
      ipv4_prefixes: Type.Array(Type.String(), { description: 'IPv4 prefixes the node originates' }),
      ipv6_prefixes: Type.Array(Type.String(), { description: 'IPv6 prefixes the node originates' }),
      inventory: FreeObject('free-form inventory'),
      labels: FreeObject('free-form labels'),
      base_template: FreeObject(
        'keys used elsewhere: `runtime.wireguard_port_range`, `bird.cold_potato_med`, `bird.route_local_pref`, `bird.blocked_prefixes`, `bird.internal_topology`',
      ),
      current_generation: Type.Integer({ minimum: 0, description: 'newest published generation; 0 when never published' }),
      lifecycle: Type.String({ description: '`active` or `decommissioned`' }),
      dns_group_id: Nullable(Type.Integer(), 'DNS group the node subscribes to, or null'),
      wireguard_public_key: Nullable(Type.String(), "the node's WireGuard key as reported by the agent, null until reported"),
      created_at: Time('when the node was created'),
      updated_at: Time('when the node last changed'),
    },
    { description: 'a node' },
  ),
);

const peeringFields = {
  id: Type.Integer({ description: 'peering id' }),
  local_node_id: Type.String({ description: 'the node the peering belongs to' }),
  name: Type.String({ description: '1 to 64 characters, unique per node' }),
  remote_asn: Type.Integer({ minimum: 1, description: 'AS number of the peer' }),
  remote_node_id: Nullable(Type.String(), 'the remote node when the peer is one of ours, else null'),
  remote_label: Nullable(Type.String(), 'free label of the peer'),
  is_internal: Type.Boolean({ description: 'a link between two of our nodes' }),
  enabled: Type.Boolean({ description: 'false keeps the record but takes the peering out of service' }),
  notes: Nullable(Type.String(), 'free notes'),
  created_at: Time('when the peering was created'),
  updated_at: Time('when the peering last changed'),
};

export const PeeringOutSchema = component(
  'PeeringOut',
  Type.Object(peeringFields, { description: 'a peering record (metadata; does not itself enter the desired state)' }),
);

export const PeeringRowSchema = component(
  'PeeringRow',
  Type.Object(
    { ...peeringFields, remote_as_name: Nullable(Type.String(), 'AS name from the registry; null when the registry is not configured or the ASN unknown') },
    { description: 'a peering as the per-node list shows it' },
  ),
);

export const InterfaceOutSchema = component(
  'InterfaceOut',
  Type.Object(
    {
      id: Type.Integer({ description: 'interface id' }),
      node_id: Type.String({ description: 'the node the interface belongs to' }),
      peering_id: Nullable(Type.Integer(), 'the peering the interface serves, or null'),
      name: Type.String({ description: 'Linux interface name (from the specification)' }),
      kind: Type.String({ description: '`wireguard`' }),
      enabled: Type.Boolean({ description: 'false leaves the interface out of the desired state' }),
      sort_order: Type.Integer({ description: "order among the node's interfaces" }),
      spec: component('InterfaceSpec', InterfaceSpecSchema),
    },
    { description: 'a WireGuard interface record' },
  ),
);

export const SessionOutSchema = component(
  'SessionOut',
  Type.Object(
    {
      id: Type.Integer({ description: 'session id' }),
      node_id: Type.String({ description: 'the node the session belongs to' }),
      peering_id: Nullable(Type.Integer(), 'the peering the session serves, or null'),
      name: Type.String({ description: 'BIRD protocol name (from the specification)' }),
      remote_asn: Type.Integer({ minimum: 1, description: 'AS number of the neighbor' }),
      enabled: Type.Boolean({ description: 'false leaves the session out of the desired state' }),
      sort_order: Type.Integer({ description: "order among the node's sessions" }),
      spec: component('SessionSpec', SessionSpecSchema),
    },
    { description: 'an eBGP session record' },
  ),
);

export const PeeringFullSchema = component(
  'PeeringFull',
  Type.Object(
    {
      ...peeringFields,
      interfaces: Type.Array(InterfaceOutSchema, { description: "the peering's interfaces" }),
      bgp_sessions: Type.Array(SessionOutSchema, { description: "the peering's BGP sessions" }),
    },
    { description: 'a peering with its interfaces and sessions' },
  ),
);

const generationFields = {
  node_id: Type.String({ description: 'the node' }),
  generation: Type.Integer({ minimum: 1, description: 'generation number' }),
  reason: Type.String({ description: 'why it was published' }),
  rollback_of: Nullable(Type.Integer(), 'the generation it re-published, or null'),
  actor: Type.String({ description: 'who published it' }),
  created_at: Time('when it was published'),
};

export const GenerationInfoSchema = component('GenerationInfo', Type.Object(generationFields, { description: 'generation info' }));
export const DesiredStateDocument = component(
  'DesiredState',
  Type.Record(Type.String(), Type.Unknown(), {
    description: 'a desired-state document: at least `node`, `interfaces[]`, `bgp_sessions[]`, `bird` (full field list: not shown)',
  }),
);
export const GenerationDetailSchema = component(
  'GenerationDetail',
  Type.Object({ ...generationFields, state: DesiredStateDocument }, { description: 'generation info with the full snapshot' }),
);

export const PublishedState = Type.Object(
  {
    node_id: Type.String({ description: 'the node' }),
    generation: Type.Integer({ description: 'the generation in force' }),
    reason: Type.String({ description: 'why it was published' }),
    created_at: Time('when it was published'),
    state: DesiredStateDocument,
  },
  { description: 'the published desired state' },
);

export const GenerationList = Type.Object(
  { generations: Type.Array(GenerationInfoSchema, { description: 'newest first' }) },
  { description: 'generation history' },
);

const DiffEntrySchema = component(
  'DiffEntry',
  Type.Object({
    path: Type.String({ description: 'JSON pointer of the changed field' }),
    op: Type.Union([Type.Literal('added'), Type.Literal('removed'), Type.Literal('changed')], { description: 'what happened to the field' }),
    from: Type.Optional(Type.Unknown({ description: 'value before (absent when added)' })),
    to: Type.Optional(Type.Unknown({ description: 'value after (absent when removed)' })),
  }),
);

export const GenerationDiff = Type.Object(
  {
    node_id: Type.String({ description: 'the node' }),
    generation: Type.Integer({ description: 'the generation compared' }),
    against: Type.Integer({ description: 'the generation it is compared against' }),
    changes: Type.Array(DiffEntrySchema, { description: 'one entry per changed field' }),
  },
  { description: 'field-level diff' },
);

const Delivery = {
  subscribers: Type.Integer({ minimum: 0, description: 'agent connections of the node that the doorbell found' }),
  delivered: Type.Integer({ minimum: 0, description: 'of those, how many were sent the doorbell' }),
};

export const RollbackResult = Type.Object(
  {
    node_id: Type.String({ description: 'the node' }),
    target_generation: Type.Integer({ description: 'the generation whose snapshot was re-published' }),
    new_generation: Type.Integer({ description: 'the generation the rollback published' }),
    reason: Type.String({ description: 'the reason recorded with the new generation' }),
    ...Delivery,
  },
  { description: 'rollback published' },
);

export const ProvisionResult = Type.Object(
  {
    node_id: Type.String({ description: "the node named by the state's `node.node_id`" }),
    generation: Type.Integer({ description: 'the generation stored' }),
    ...Delivery,
  },
  { description: 'desired state stored as a new generation' },
);

const HistoryEntrySchema = component(
  'HistoryEntry',
  Type.Object({
    position: Type.String({ description: 'global position `tx/pos`; pass as `before` for the next page' }),
    type: Type.String({ description: 'event type' }),
    recorded_at: Time('when the event was recorded'),
    actor: Type.String({ description: 'who caused it' }),
    request_id: Nullable(Type.String(), 'the request that caused it, or null'),
    data: Type.Unknown({ description: 'the event data' }),
  }),
);

export const NodeHistory = Type.Object(
  {
    node_id: Type.String({ description: 'the node' }),
    events: Type.Array(HistoryEntrySchema, { description: 'newest first' }),
    next_before: Nullable(Type.String(), 'position to pass as `before` for the next page; null on the last page'),
  },
  { description: "the node's events" },
);

export const NotifyResult = Type.Object(
  {
    node_id: Type.String({ description: 'the node' }),
    event: Type.Union([Type.Literal('desired_state_updated'), Type.Literal('snapshot_request')], { description: 'the doorbell rung' }),
    generation: Type.Integer({ description: 'the generation in force after the call' }),
    ...Delivery,
  },
  { description: 'doorbell rung' },
);

const GenerationOrNull = Nullable(Type.Integer(), 'the generation the write published, or null when nothing changed');

export const ProvisionPeeringResult = Type.Object(
  {
    peering: PeeringOutSchema,
    interface: InterfaceOutSchema,
    bgp_session: Type.Union([SessionOutSchema, Type.Null()], { description: 'the first session, or null' }),
    sessions: Type.Array(SessionOutSchema, { description: 'every session created' }),
    generation: GenerationOrNull,
  },
  { description: 'peering, interface and sessions created in one transaction' },
);

export const ReplacePeeringResult = Type.Object({ peering: PeeringFullSchema, generation: GenerationOrNull }, { description: 'the peering as replaced' });

export const BackfillResult = Type.Object(
  {
    dry_run: Type.Boolean({ description: 'true when the plan was only computed' }),
    peerings: Type.Array(
      Type.Object({
        name: Type.String({ description: 'peering name' }),
        remote_asn: Type.Integer({ description: 'AS number of the peer' }),
        peering_id: Nullable(Type.Integer(), 'the peering reused or created (null in a dry run that would create one)'),
        create: Type.Boolean({ description: 'whether the peering is new' }),
        interface_ids: Type.Array(Type.Integer(), { description: 'interfaces folded into it' }),
        bgp_session_ids: Type.Array(Type.Integer(), { description: 'sessions folded into it' }),
      }),
      { description: 'peerings reused or created' },
    ),
    skipped: Type.Array(
      Type.Object({
        kind: Type.Union([Type.Literal('interface'), Type.Literal('bgp_session')], { description: 'what was left alone' }),
        id: Type.Integer({ description: 'its id' }),
        name: Type.String({ description: 'its name' }),
        reason: Type.String({ description: 'why it was not folded' }),
      }),
      { description: 'orphans left as they are' },
    ),
    generation: GenerationOrNull,
  },
  { description: 'backfill plan or result' },
);

// The code's types and the documented schemas may not drift apart.
export const checked: [
  Describes<typeof NodeOutSchema, NodeOut>,
  Describes<typeof PeeringOutSchema, PeeringOut>,
  Describes<typeof InterfaceOutSchema, InterfaceOut>,
  Describes<typeof SessionOutSchema, SessionOut>,
  Describes<typeof PeeringFullSchema, PeeringFull>,
  Describes<typeof GenerationInfoSchema, GenerationInfo>,
  Describes<typeof HistoryEntrySchema, HistoryEntry>,
  Describes<typeof DiffEntrySchema, DiffEntry>,
  Describes<typeof NotifyResult, NotifyOutcome>,
  Describes<typeof BackfillResult, BackfillPlan & { dry_run: boolean; generation: number | null }>,
] = [true, true, true, true, true, true, true, true, true, true];
