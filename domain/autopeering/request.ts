import { unreachable, type DomainEvent } from '../decider.js';

/**
 * An automatic-peering request (document 3), one `autopeer-request-<id>` stream
 * each. The peering it creates lives in the node stream and is written in the
 * same append as `AutopeeringRequestProvisioned`, so there is never a half
 * request: a request exists only once provisioned. Cancelling it (self-removal,
 * or an operator deleting the peering) is the only transition.
 *
 * The record keeps what was asked and what was handed out, so a row whose
 * peering is gone still shows it (the contract's "audit snapshot").
 */

/** Statuses a request can have; `provisioned` is the active one (it holds a seat and the (asn, node) slot). */
export const REQUEST_STATUSES = ['provisioned', 'cancelled'] as const;
export type RequestStatus = (typeof REQUEST_STATUSES)[number];

/** The contract's three session forms (document 3, RequestCreateIn). */
export type SessionForm = 'link-local-mp' | 'ula-mp' | 'dual-plain';

/** What the peer asked for, as validated by the portal (RequestCreateIn with defaults applied). */
export interface RequestedPeering {
  public_key: string;
  endpoint: string | null;
  link_local: string;
  mtu: number;
  mp_bgp: boolean;
  session_addressing: 'link-local' | 'ipv6-ula';
  peer_ipv4: string | null;
  peer_ipv6: string | null;
  extended_next_hop: boolean;
  notes: string | null;
}

/** What the node handed out (the detail's `provision` block, plus the record names it created). */
export interface ProvisionedPeering {
  /** Dial-in host plus the assigned port, or null when the node has no `endpoint_host`. */
  endpoint: string | null;
  listen_port: number;
  node_public_key: string | null;
  node_link_local: string | null;
  node_asn: number;
  mtu: number;
  /** Our IPv4 tunnel address of the two plain sessions (the node's loopback), null for the other forms; absent in records made before it was kept. */
  node_ipv4?: string | null;
  /** Our IPv6 tunnel address of the ULA and two plain sessions (the node's loopback), null for the link-local form; absent in older records. */
  node_ipv6?: string | null;
  interface_name: string;
  session_names: string[];
}

export interface RequestRecord {
  request_id: number;
  node_id: string;
  asn: number;
  /** Maintainer of the portal session that asked; null when unknown. */
  mntner: string | null;
  peering_id: number;
  form: SessionForm;
  requested: RequestedPeering;
  provision: ProvisionedPeering;
}

/** Who ended a request: the peer in the portal, or an operator removing the peering. */
export type CancelledBy = 'requester' | 'operator';

/** The reject reason the contract gives an operator's removal. */
export const REMOVED_BY_OPERATOR = 'removed by operator';

export type RequestEvent =
  | DomainEvent<'AutopeeringRequestProvisioned', RequestRecord>
  | DomainEvent<
      'AutopeeringRequestCancelled',
      { request_id: number; node_id: string; asn: number; peering_id: number; by: CancelledBy; reject_reason: string | null }
    >;

export const REQUEST_EVENT_TYPES: readonly RequestEvent['type'][] = ['AutopeeringRequestProvisioned', 'AutopeeringRequestCancelled'];

export const requestStream = (requestId: number): string => `autopeer-request-${requestId}`;

export type RequestState =
  | { status: 'none' }
  | { status: 'provisioned'; record: RequestRecord }
  | { status: 'cancelled'; record: RequestRecord; by: CancelledBy; reject_reason: string | null };

export const initialRequestState = (): RequestState => ({ status: 'none' });

export function evolveRequest(state: RequestState, event: RequestEvent): RequestState {
  switch (event.type) {
    case 'AutopeeringRequestProvisioned':
      return { status: 'provisioned', record: event.data };
    case 'AutopeeringRequestCancelled':
      return state.status === 'none' ? state : { status: 'cancelled', record: state.record, by: event.data.by, reject_reason: event.data.reject_reason };
    default:
      return unreachable(event);
  }
}
