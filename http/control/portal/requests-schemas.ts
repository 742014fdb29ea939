import { Type, type TSchema } from '@sinclair/typebox';
import { BGP_STATES } from '../../../domain/telemetry/reports.js';
import { component } from '../../shared/routes.js';

/**
 * Response shapes of the portal's nodes and requests (OpenAPI); the rows the
 * portal's pages name are shared components, each field described in
 * document 3's words ("Autopeering portal records").
 */

const Nullable = <T extends TSchema>(t: T, description?: string) => Type.Union([t, Type.Null()], description === undefined ? {} : { description });
const Time = Type.String({ format: 'date-time' });
const Count = Type.Integer({ minimum: 0 });
const D = (description: string) => ({ description });

export const NodeOfferSchema = component(
  'NodeOffer',
  Type.Object(
    {
      node_id: Type.String(D('the node')),
      site: Nullable(Type.String(), 'city code of the node; null when not set'),
      endpoint_host: Nullable(Type.String(), 'dial-in host; null: the node cannot be dialled in'),
      capacity: Type.Integer({ minimum: 0, description: 'seats of the external port pool' }),
      used_ports: Type.Integer({ minimum: 0, description: 'ports held, manual peerings included' }),
      free_ports: Type.Integer({ minimum: 0, description: 'free seats' }),
      remaining: Type.Integer({ minimum: 0, description: 'requests the node still accepts' }),
      provisioned: Type.Integer({ minimum: 0, description: 'requests provisioned through the portal' }),
      max_sessions: Nullable(Type.Integer({ minimum: 0 }), 'optional manual cap; null: limited only by the pool'),
      region: Nullable(Type.String(), 'display metadata configured in the policy: region'),
      country_code: Nullable(Type.String(), 'display metadata configured in the policy: country code'),
      description: Nullable(Type.String(), 'display metadata configured in the policy: description'),
      bandwidth_mbps: Nullable(Type.Integer(), 'display metadata configured in the policy: bandwidth in Mbit/s'),
      monthly_quota_gb: Nullable(Type.Integer(), 'display metadata configured in the policy: monthly quota in GB'),
      notice: Nullable(Type.String(), 'display metadata configured in the policy: notice'),
      not_ready: Nullable(
        Type.String(),
        "why the node takes no peering yet (the portal offers it as not ready, with this reason); null: ready. Today: our node's WireGuard public key is not known until its agent registers",
      ),
    },
    D('a node offered for peering, with its seats (document 3, NodeOffer)'),
  ),
);

const Form = component(
  'SessionForm',
  Type.Union([Type.Literal('link-local-mp'), Type.Literal('ula-mp'), Type.Literal('dual-plain')], {
    description: 'session form: link-local multiprotocol, ULA single session or two plain sessions',
  }),
);

export const ProvisionSchema = Type.Object(
  {
    endpoint: Nullable(Type.String(), 'dial-in host plus the assigned port; null: no dial-in host'),
    node_public_key: Nullable(Type.String(), "our node's WireGuard public key; null while not known"),
    node_link_local: Nullable(Type.String(), "our node's IPv6 link-local address; null when not set"),
    node_asn: Type.Integer(D('our AS number')),
    mtu: Type.Integer(D('the tunnel MTU')),
    node_ipv4: Nullable(Type.String(), 'our IPv4 tunnel address (two plain sessions: the neighbour of your IPv4 session); null for the other forms'),
    node_ipv6: Nullable(
      Type.String(),
      'our IPv6 tunnel address (ULA and two plain sessions: the neighbour of your IPv6 session); null for the link-local form',
    ),
  },
  { description: 'what the peer configures on its side' },
);

export const PortalRequestRowSchema = component(
  'PortalRequestRow',
  Type.Object(
    {
      id: Nullable(Type.Integer(), 'null for an adopted manual peering'),
      adopted: Type.Boolean({ description: 'a manually created external peering of the AS, shown as a row' }),
      node_id: Type.String(D('the target node')),
      asn: Type.Integer(D('the AS of the portal session (its verified ASN)')),
      status: Type.Union([Type.Literal('provisioned'), Type.Literal('cancelled')], D('`provisioned` or `cancelled`')),
      peering_id: Nullable(Type.Integer(), 'the peering record'),
      cancelled_by: Nullable(
        Type.Union([Type.Literal('requester'), Type.Literal('operator')]),
        'who cancelled: `requester` or `operator`; null while provisioned',
      ),
      reject_reason: Nullable(Type.String(), 'the reason recorded with the cancellation, or null'),
      form: Nullable(Form, 'the session form; null when the sessions fit none of the three (an adopted manual peering)'),
      public_key: Nullable(Type.String(), 'peer WireGuard public key'),
      endpoint: Nullable(Type.String(), "the peer's dial-in endpoint"),
      listen_port: Nullable(Type.Integer(), 'the assigned port'),
      mtu: Nullable(Type.Integer(), 'the tunnel MTU'),
      interface_name: Nullable(Type.String(), 'the WireGuard interface name'),
      session_names: Type.Array(Type.String(), D('BIRD protocol names of the sessions')),
      link_local: Nullable(Type.String(), "the peer's IPv6 link-local address"),
      peer_ipv4: Nullable(Type.String(), 'peer IPv4 tunnel address (by form)'),
      peer_ipv6: Nullable(Type.String(), 'peer IPv6 tunnel address (by form)'),
      notes: Nullable(Type.String(), 'free notes'),
      from_snapshot: Type.Boolean({ description: 'the peering is gone; displayed fields come from the request record' }),
      provision: Nullable(ProvisionSchema, 'what the peer configures on its side'),
      created_at: { ...Time, description: 'when the request was made (adopted: when the peering was)' },
      updated_at: { ...Time, description: 'when the request last changed (adopted: the peering)' },
    },
    D(
      'a request of the AS, or a manually created external peering of the AS adopted as a row; displayed public key, endpoint, port, MTU, interface name and session form are derived live from the peering record, rows whose peering was deleted fall back to an audit snapshot',
    ),
  ),
);

const State = Nullable(Type.Union(BGP_STATES.map((s) => Type.Literal(s))), 'BGP state as reported; null when not reported');
const Health = Type.Union(
  [Type.Literal('up'), Type.Literal('connecting'), Type.Literal('down'), Type.Literal('unknown')],
  D('`up`, `connecting`, `down` or `unknown`'),
);
const Since = Nullable(Type.String(), 'when the BGP state last changed, as reported; null when not reported');
const EstablishedSeconds = Nullable(Count, 'seconds established at the snapshot; null when not established');
const Routes = Type.Object({
  imported: Nullable(Count, 'routes imported from the peer; null when not reported'),
  exported: Nullable(Count, 'routes exported to the peer; null when not reported (older agents only import)'),
});

export const LiveSchema = component(
  'RequestLive',
  Type.Object(
    {
      bgp_state: State,
      bgp_health: Health,
      since: Since,
      observed_at: { ...Time, description: "when the node's snapshot was taken" },
      established_seconds: EstablishedSeconds,
      wireguard: Nullable(
        Type.Object({
          latest_handshake_at: Nullable(Type.String(), 'the latest handshake; null without one'),
          rx_bytes: { ...Count, description: 'bytes received, cumulative' },
          tx_bytes: { ...Count, description: 'bytes sent, cumulative' },
        }),
        'the WireGuard peer: handshake time and cumulative bytes; null when not found',
      ),
      routes: Type.Object(
        { ipv4: Nullable(Routes, 'IPv4 counts; null when not reported'), ipv6: Nullable(Routes, 'IPv6 counts; null when not reported') },
        D('per address family import and export counts'),
      ),
      sessions: Nullable(
        Type.Array(
          Type.Object({
            name: Type.String(D('BIRD protocol name')),
            bgp_state: State,
            bgp_health: Health,
            since: Since,
            established_seconds: EstablishedSeconds,
            routes: { ...Routes, description: "the session's import and export counts" },
          }),
        ),
        'two plain sessions: each one; null for the other forms',
      ),
    },
    { description: "from the node's latest runtime snapshot" },
  ),
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
