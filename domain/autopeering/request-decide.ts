import { unreachable, type Decider } from '../decider.js';
import { Conflict, IllegalState, NotFound } from '../errors.js';
import {
  evolveRequest,
  initialRequestState,
  REMOVED_BY_OPERATOR,
  type CancelledBy,
  type RequestEvent,
  type RequestRecord,
  type RequestState,
} from './request.js';

/**
 * Commands on one request stream. Everything the portal checks against the node
 * (policy open, seats, free port, one external peering per AS) is decided on the
 * node stream in the same append; this decider only keeps the request's own
 * lifecycle straight.
 */
export type RequestCommand = { type: 'ProvisionRequest'; record: RequestRecord } | { type: 'CancelRequest'; request_id: number; by: CancelledBy };

export function decideRequest(command: RequestCommand, state: RequestState): RequestEvent[] {
  switch (command.type) {
    case 'ProvisionRequest':
      if (state.status !== 'none') throw new Conflict(`autopeering request ${command.record.request_id} already exists`);
      return [{ type: 'AutopeeringRequestProvisioned', data: command.record }];
    case 'CancelRequest':
      return cancel(command.request_id, command.by, state);
    default:
      return unreachable(command);
  }
}

/**
 * The peer may cancel only a provisioned request (409 otherwise, as the
 * contract's DELETE). An operator's removal of the peering cancels the request
 * linked to it; when that request is already cancelled there is nothing left to
 * free, so the removal records nothing instead of failing the peering delete.
 */
function cancel(requestId: number, by: CancelledBy, state: RequestState): RequestEvent[] {
  if (state.status === 'none') throw new NotFound(`unknown autopeering request ${requestId}`);
  if (state.status !== 'provisioned') {
    if (by === 'operator') return [];
    throw new IllegalState(`autopeering request ${requestId} is not provisioned`);
  }
  const { record } = state;
  return [
    {
      type: 'AutopeeringRequestCancelled',
      data: {
        request_id: record.request_id,
        node_id: record.node_id,
        asn: record.asn,
        peering_id: record.peering_id,
        by,
        reject_reason: by === 'operator' ? REMOVED_BY_OPERATOR : null,
      },
    },
  ];
}

export const requestDecider: Decider<RequestCommand, RequestEvent, RequestState> = {
  initialState: initialRequestState,
  evolve: evolveRequest,
  decide: decideRequest,
};
