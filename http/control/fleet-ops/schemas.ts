import { Type } from '@sinclair/typebox';
import { KiB } from '../../shared/body-limit.js';

/** Request and response shapes of the fleet operations and flap mitigations (one source for validation and OpenAPI). */

export const TAGS = { operations: ['fleet operations'], mitigations: ['flap mitigations'] };

export const DryRunBody = Type.Object({ dry_run: Type.Optional(Type.Boolean({ default: true })) }, { additionalProperties: false });

const NodeId = Type.String({ minLength: 1, maxLength: 64 });
const Generations = Type.Record(Type.String(), Type.Integer({ minimum: 0 }));

const Detail = Type.Object({
  node_id: Type.String(),
  kind: Type.Union([Type.Literal('node'), Type.Literal('peering'), Type.Literal('interface'), Type.Literal('bgp_session')]),
  id: Type.Union([Type.Integer(), Type.Null()]),
  name: Type.String(),
});

export const OperationResult = Type.Object({
  dry_run: Type.Boolean(),
  changed_nodes: Type.Array(Type.String()),
  generations: Generations,
  details: Type.Object({
    changes: Type.Array(Type.Composite([Detail, Type.Object({ field: Type.String(), from: Type.Unknown(), to: Type.Unknown() })])),
    skipped: Type.Array(Type.Composite([Detail, Type.Object({ reason: Type.String() })])),
  }),
});

export const PortPools = Type.Object({
  pools: Type.Record(Type.String(), Type.Object({ start: Type.Integer(), end: Type.Integer() })),
});

/** Up to 1,000 node ids of up to 64 characters: about 67 KB, past the 64 KiB default. */
export const PREFIX_BODY_LIMIT_BYTES = 256 * KiB;

export const PrefixBody = Type.Object(
  {
    /** Checked by the command, so that any string (the empty one too) gets the contract's `invalid prefix: <input>`. */
    prefix: Type.String({ maxLength: 256 }),
    nodes: Type.Optional(Type.Array(NodeId, { maxItems: 1000 })),
  },
  { additionalProperties: false },
);

const Deferred = Type.Array(Type.Object({ node_id: Type.String(), agent_version: Type.String() }), {
  description: 'nodes whose agent reported a version below 1.0.187: their documents leave the block out until the agent reports a newer one',
});

export const PrefixResult = Type.Object({ prefix: Type.String(), nodes: Type.Array(Type.String()), changed: Generations, deferred: Deferred });

export const AsnBody = Type.Object({ asn: Type.Integer({ minimum: 1, maximum: 4294967295 }) }, { additionalProperties: false });

const Session = Type.Object({ id: Type.Integer(), node_id: Type.String(), name: Type.String(), remote_asn: Type.Integer(), enabled: Type.Boolean() });

export const PeerResult = Type.Object({ asn: Type.Integer(), sessions: Type.Array(Session), changed: Generations });

export const MitigationsView = Type.Object({
  blocked_prefixes: Type.Array(Type.Object({ prefix: Type.String(), nodes: Type.Array(Type.String()), deferred: Deferred })),
  disabled_sessions: Type.Array(Type.Composite([Session, Type.Object({ by_mitigation: Type.Boolean() })])),
});
