import { Type, type Static, type TSchema } from '@sinclair/typebox';

/**
 * Request bodies of the node-agent reports (`POST /agent/*`). The contract names
 * some fields and leaves the rest "not shown"; these schemas are the definition
 * (docs/decisions.md, "Telemetry"). Every object is
 * closed (`additionalProperties: false`): agent and server ship together, so an
 * unknown field is a bug to see, not to drop. Counters are cumulative byte counts
 * as the kernel reports them.
 */

const strict = { additionalProperties: false } as const;
const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
const Opt = <T extends TSchema>(schema: T) => Type.Optional(Nullable(schema));

export const NodeId = Type.String({ minLength: 1, maxLength: 64 });
const Name = Type.String({ minLength: 1, maxLength: 128 });
const Time = Type.String({ format: 'date-time' });
const Bytes = Type.Integer({ minimum: 0 });
const Count = Type.Integer({ minimum: 0, maximum: 2147483647 });
const Asn = Type.Integer({ minimum: 1, maximum: 4294967295 });
const Generation = Type.Integer({ minimum: 0, maximum: 2147483647 });
const Message = Type.String({ maxLength: 2000 });
export const WireguardPublicKey = Type.String({ pattern: '^[A-Za-z0-9+/]{42}[AEIMQUYcgkosw480]=$', description: 'base64 of 32 bytes' });
const Prefix = Type.String({ minLength: 3, maxLength: 64, pattern: '^[0-9A-Fa-f.:]+/\\d{1,3}$' });

/** BGP session states as BIRD shows them, lower-cased; only `established` carries routes. */
export const BGP_STATES = ['established', 'idle', 'connect', 'active', 'opensent', 'openconfirm', 'down'] as const;
export const BgpState = Type.Union(BGP_STATES.map((s) => Type.Literal(s)));
export type BgpState = (typeof BGP_STATES)[number];

export const CONTAINER_STATES = ['running', 'restarting', 'paused', 'created', 'exited', 'dead', 'missing'] as const;

export const RuntimeSnapshotSchema = Type.Object(
  {
    node_id: NodeId,
    generation: Opt(Generation),
    captured_at: Time,
    containers: Type.Array(
      Type.Object(
        {
          name: Name,
          state: Type.Union(CONTAINER_STATES.map((s) => Type.Literal(s))),
          image: Opt(Type.String({ maxLength: 512 })),
          health: Opt(Type.String({ maxLength: 32 })),
        },
        strict,
      ),
      { maxItems: 256 },
    ),
    interfaces: Type.Array(Type.Object({ name: Name, up: Type.Boolean(), mtu: Opt(Count), rx_bytes: Bytes, tx_bytes: Bytes }, strict), { maxItems: 1024 }),
    wireguard_interfaces: Type.Array(
      Type.Object(
        {
          name: Name,
          public_key: Opt(WireguardPublicKey),
          listen_port: Opt(Type.Integer({ minimum: 0, maximum: 65535 })),
          /** How the agent made the device: the kernel module or `wireguard-go`. */
          implementation: Opt(Type.Union([Type.Literal('kernel'), Type.Literal('userspace')])),
          /** Userspace: restarts of its `wireguard-go` since the agent started, and how the last process ended. */
          restarts: Opt(Count),
          last_exit: Opt(Type.String({ maxLength: 256 })),
          last_exit_at: Opt(Time),
          peers: Type.Array(
            Type.Object(
              {
                public_key: WireguardPublicKey,
                endpoint: Opt(Type.String({ maxLength: 256 })),
                latest_handshake_at: Opt(Time),
                rx_bytes: Bytes,
                tx_bytes: Bytes,
              },
              strict,
            ),
            { maxItems: 64 },
          ),
        },
        strict,
      ),
      { maxItems: 1024 },
    ),
    bgp_protocols: Type.Array(
      Type.Object(
        {
          name: Name,
          state: BgpState,
          since: Opt(Time),
          remote_asn: Opt(Asn),
          routes_imported: Opt(Count),
          routes_exported: Opt(Count),
          // Per address family (the channel of that family): an MP-BGP session carries both in one protocol. Absent from older agents (their snapshots still validate).
          routes_imported_v4: Opt(Count),
          routes_exported_v4: Opt(Count),
          routes_imported_v6: Opt(Count),
          routes_exported_v6: Opt(Count),
          info: Opt(Type.String({ maxLength: 256 })),
        },
        strict,
      ),
      { maxItems: 2048 },
    ),
    self_metrics: Type.Object(
      {
        cpu: Type.Number({ minimum: 0, description: 'percent of one core, averaged since the previous snapshot' }),
        rss: Bytes,
        total_failures: Count,
        log_warning_count: Count,
        log_error_count: Count,
        last_error_at: Nullable(Time),
        last_error_message: Nullable(Message),
        last_routing_collect_seconds: Opt(Type.Number({ minimum: 0 })),
        last_reresolve_seconds: Opt(Type.Number({ minimum: 0 })),
      },
      { ...strict, description: 'warning/error counts and the last error cover the last hour' },
    ),
  },
  strict,
);
export type RuntimeSnapshot = Static<typeof RuntimeSnapshotSchema>;

export const RoutingTableSchema = Type.Object(
  {
    node_id: NodeId,
    captured_at: Time,
    rpki_observed: Type.Boolean({ description: 'false when the agent could not read RPKI validity; `rpki` is then null' }),
    routes: Type.Array(
      Type.Object(
        {
          prefix: Prefix,
          protocol: Name,
          origin_asn: Nullable(Asn),
          as_path: Type.Array(Asn, { maxItems: 64 }),
          rpki: Nullable(Type.Union([Type.Literal('valid'), Type.Literal('invalid'), Type.Literal('not_found')])),
          local: Type.Boolean({ description: 'originated by this network (not learnt from an external peer)' }),
        },
        strict,
      ),
      { maxItems: 20000 },
    ),
  },
  strict,
);
export type RoutingTable = Static<typeof RoutingTableSchema>;

export const FEED_STATES = ['established', 'down', 'stale', 'unknown'] as const;

export const PrefixFlapsSchema = Type.Object(
  {
    node_id: NodeId,
    captured_at: Time,
    feed_state: Type.Union(
      FEED_STATES.map((s) => Type.Literal(s)),
      { description: 'state of the collector session the scores come from' },
    ),
    entries: Type.Array(
      Type.Object(
        {
          prefix: Prefix,
          peer_asn: Nullable(Asn), // first AS-path hop after the local AS; null for own origin or no attribution
          origin_asn: Nullable(Asn),
          score: Type.Number({ minimum: 0, description: 'decayed flap count (half-life 10 min) at captured_at' }),
          flaps: Opt(Count),
          last_flap_at: Opt(Time),
          // Added with flap localisation; an older agent omits them (weaker evidence, never an error).
          as_path: Opt(Type.Array(Asn, { maxItems: 64, description: 'ASNs from the first hop after the local AS to the origin, prepends collapsed' })),
          announcements: Opt(Type.Integer({ minimum: 0, maximum: 2147483647, description: 'announcements counted since the previous report' })),
          withdrawals: Opt(Type.Integer({ minimum: 0, maximum: 2147483647, description: 'withdrawals counted since the previous report' })),
        },
        strict,
      ),
      { maxItems: 1000, description: 'top-N by score; (prefix, peer_asn) unique' },
    ),
    total_changes: Opt(
      Type.Integer({
        minimum: 0,
        maximum: 2147483647,
        description: 'every change the collector saw since its previous report, prefixes outside the top N included',
      }),
    ),
  },
  strict,
);
export type PrefixFlaps = Static<typeof PrefixFlapsSchema>;

export const WireguardTrafficSchema = Type.Object(
  {
    node_id: NodeId,
    captured_at: Time,
    peers: Type.Array(Type.Object({ interface: Name, public_key: Opt(WireguardPublicKey), rx_bytes: Bytes, tx_bytes: Bytes }, strict), { maxItems: 4096 }),
  },
  strict,
);
export type WireguardTraffic = Static<typeof WireguardTrafficSchema>;

export const WireguardReresolveSchema = Type.Object(
  {
    node_id: NodeId,
    checked_at: Time,
    interfaces: Type.Array(
      Type.Object(
        {
          interface: Name,
          endpoint: Type.String({ minLength: 1, maxLength: 256 }),
          previous_address: Nullable(Type.String({ maxLength: 64 })),
          address: Nullable(Type.String({ maxLength: 64 })),
          reresolved: Type.Boolean({ description: 'the peer endpoint was set to a new address' }),
          error: Nullable(Message),
        },
        strict,
      ),
      { maxItems: 1024 },
    ),
  },
  strict,
);
export type WireguardReresolve = Static<typeof WireguardReresolveSchema>;

export const RECONCILE_STATUSES = ['in_sync', 'drift', 'failed'] as const;

export const ReconciliationReportSchema = Type.Object(
  {
    node_id: NodeId,
    generation: Nullable(Generation),
    captured_at: Time,
    status: Type.Union(RECONCILE_STATUSES.map((s) => Type.Literal(s))),
    drift_items: Type.Array(Type.Object({ kind: Name, name: Name, detail: Nullable(Message) }, strict), {
      maxItems: 1000,
      description: 'what differs between the desired state and the node',
    }),
    error: Opt(Message),
  },
  strict,
);
export type ReconciliationReport = Static<typeof ReconciliationReportSchema>;

export const APPLY_STATUSES = ['succeeded', 'failed', 'rolled_back'] as const;

export const ApplyResultSchema = Type.Object(
  {
    node_id: NodeId,
    generation: Type.Integer({ minimum: 1, maximum: 2147483647 }),
    status: Type.Union(APPLY_STATUSES.map((s) => Type.Literal(s))),
    started_at: Time,
    finished_at: Time,
    error: Nullable(Message),
    steps: Type.Optional(
      Type.Array(
        Type.Object({ name: Name, status: Type.Union([Type.Literal('ok'), Type.Literal('failed'), Type.Literal('skipped')]), detail: Opt(Message) }, strict),
        { maxItems: 200 },
      ),
    ),
  },
  strict,
);
export type ApplyResult = Static<typeof ApplyResultSchema>;

export const WireguardKeysSchema = Type.Object(
  {
    node_id: NodeId,
    public_key: WireguardPublicKey,
    private_key_escrow: Type.Optional(Type.String({ maxLength: 8192, description: 'private key encrypted to the recovery key; empty or absent: none' })),
  },
  strict,
);
export type WireguardKeys = Static<typeof WireguardKeysSchema>;
