import { Type, type TSchema } from '@sinclair/typebox';
import { BGP_STATES } from '../../../domain/telemetry/reports.js';

/** Response shapes of the portal's nodes and requests (OpenAPI). */

const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);
const Time = Type.String({ format: 'date-time' });
const Count = Type.Integer({ minimum: 0 });

export const NodeOfferSchema = Type.Object({
  node_id: Type.String(),
  site: Nullable(Type.String()),
  endpoint_host: Nullable(Type.String({ description: 'dial-in host; null: the node cannot be dialled in' })),
  capacity: Type.Integer({ minimum: 0, description: 'seats of the external port pool' }),
  used_ports: Type.Integer({ minimum: 0, description: 'ports held, manual peerings included' }),
  free_ports: Type.Integer({ minimum: 0 }),
  remaining: Type.Integer({ minimum: 0, description: 'requests the node still accepts' }),
  provisioned: Type.Integer({ minimum: 0, description: 'requests provisioned through the portal' }),
  max_sessions: Nullable(Type.Integer({ minimum: 0 })),
  region: Nullable(Type.String()),
  country_code: Nullable(Type.String()),
  description: Nullable(Type.String()),
  bandwidth_mbps: Nullable(Type.Integer()),
  monthly_quota_gb: Nullable(Type.Integer()),
  notice: Nullable(Type.String()),
  not_ready: Nullable(
    Type.String({
      description:
        "why the node takes no peering yet (the portal offers it as not ready, with this reason); null: ready. Today: our node's WireGuard public key is not known until its agent registers",
    }),
  ),
});

const Form = Type.Union([Type.Literal('link-local-mp'), Type.Literal('ula-mp'), Type.Literal('dual-plain')]);

export const ProvisionSchema = Type.Object(
  {
    endpoint: Nullable(Type.String({ description: 'dial-in host plus the assigned port; null: no dial-in host' })),
    node_public_key: Nullable(Type.String()),
    node_link_local: Nullable(Type.String()),
    node_asn: Type.Integer(),
    mtu: Type.Integer(),
    node_ipv4: Nullable(
      Type.String({ description: 'our IPv4 tunnel address (two plain sessions: the neighbour of your IPv4 session); null for the other forms' }),
    ),
    node_ipv6: Nullable(
      Type.String({ description: 'our IPv6 tunnel address (ULA and two plain sessions: the neighbour of your IPv6 session); null for the link-local form' }),
    ),
  },
  { description: 'what the peer configures on its side' },
);

export const PortalRequestRowSchema = Type.Object({
  id: Nullable(Type.Integer({ description: 'null for an adopted manual peering' })),
  adopted: Type.Boolean({ description: 'a manually created external peering of the AS, shown as a row' }),
  node_id: Type.String(),
  asn: Type.Integer(),
  status: Type.Union([Type.Literal('provisioned'), Type.Literal('cancelled')]),
  peering_id: Nullable(Type.Integer()),
  cancelled_by: Nullable(Type.Union([Type.Literal('requester'), Type.Literal('operator')])),
  reject_reason: Nullable(Type.String()),
  form: Nullable(Form),
  public_key: Nullable(Type.String()),
  endpoint: Nullable(Type.String({ description: "the peer's dial-in endpoint" })),
  listen_port: Nullable(Type.Integer()),
  mtu: Nullable(Type.Integer()),
  interface_name: Nullable(Type.String()),
  session_names: Type.Array(Type.String()),
  link_local: Nullable(Type.String()),
  peer_ipv4: Nullable(Type.String()),
  peer_ipv6: Nullable(Type.String()),
  notes: Nullable(Type.String()),
  from_snapshot: Type.Boolean({ description: 'the peering is gone; displayed fields come from the request record' }),
  provision: Nullable(ProvisionSchema),
  created_at: Time,
  updated_at: Time,
});

const State = Nullable(Type.Union(BGP_STATES.map((s) => Type.Literal(s))));
const Health = Type.Union([Type.Literal('up'), Type.Literal('connecting'), Type.Literal('down'), Type.Literal('unknown')]);
const Routes = Type.Object({ imported: Nullable(Count), exported: Nullable(Count) });

export const LiveSchema = Type.Object(
  {
    bgp_state: State,
    bgp_health: Health,
    since: Nullable(Type.String()),
    observed_at: Time,
    established_seconds: Nullable(Count),
    wireguard: Nullable(Type.Object({ latest_handshake_at: Nullable(Type.String()), rx_bytes: Count, tx_bytes: Count })),
    routes: Type.Object({ ipv4: Nullable(Routes), ipv6: Nullable(Routes) }),
    sessions: Nullable(
      Type.Array(
        Type.Object({
          name: Type.String(),
          bgp_state: State,
          bgp_health: Health,
          since: Nullable(Type.String()),
          established_seconds: Nullable(Count),
          routes: Routes,
        }),
      ),
    ),
  },
  { description: "from the node's latest runtime snapshot" },
);

export const MtuProbeSchema = Type.Object({
  status: Type.Union([Type.Literal('ok'), Type.Literal('mismatch'), Type.Literal('unreachable')], {
    description: 'ok: the path carries the tunnel MTU; mismatch: less; unreachable: no DF ping came back',
  }),
  pmtu: Nullable(Type.Integer({ description: 'largest packet that passed (bytes, headers included); null when unreachable' })),
  mtu: Type.Integer({ description: "the tunnel interface's MTU" }),
});

export const LatencyProbeSchema = Type.Object({
  rtt_ms_avg: Nullable(Type.Number({ description: 'null when no reply came back' })),
  rtt_ms_max: Nullable(Type.Number()),
  loss_pct: Type.Number({ minimum: 0, maximum: 100 }),
});

const ProbedAt = Type.Object({ probed_at: Time });

export const PortalRequestDetailSchema = Type.Composite([
  PortalRequestRowSchema,
  Type.Object({
    live: Nullable(LiveSchema),
    mtu_probe: Nullable(Type.Composite([MtuProbeSchema, ProbedAt], { description: 'the last MTU probe; null until probed (runs once after creation)' })),
    latency: Nullable(Type.Composite([LatencyProbeSchema, ProbedAt], { description: 'the last latency probe; null until probed' })),
  }),
]);

export const PortalRequestCreatedSchema = Type.Composite([
  PortalRequestRowSchema,
  Type.Object({ generation: Nullable(Type.Integer({ description: "the node's desired-state generation that carries the peering" })) }),
]);
