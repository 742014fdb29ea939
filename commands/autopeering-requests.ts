import { planProvision, type ValidatedRequest } from '../domain/autopeering/create.js';
import { decideRequest, requestDecider } from '../domain/autopeering/request-decide.js';
import { requestStream, type RequestEvent, type RequestRecord } from '../domain/autopeering/request.js';
import { fold } from '../domain/decider.js';
import { provisionCommands, reserveProvisionIds } from '../domain/node/provision.js';
import { NotFound } from '../domain/errors.js';
import type { EventMetadata } from '../infra/eventstore/types.js';
import { provisionedCount } from '../projections/autopeering/queries.js';
import type { AnswerReader, FleetDeps, NodeWriteOutcome } from './fleet-write.js';
import { writeNode } from './node-write.js';
import { load } from './handle.js';

/** Who asks, from the portal session. */
export interface Requester {
  asn: number;
  mntner: string | null;
}

/**
 * `POST /autopeering/requests`: one append to the node stream (peering,
 * interface, sessions, the node's new desired state) and the request stream
 * (`AutopeeringRequestProvisioned`), through the same provisioning path as
 * `/admin/.../peerings/provision`. The node's stream is locked while the plan
 * counts seats and picks the lowest free port, so two requests for the last
 * port take turns and the second finds none (409). Anything that fails before
 * the commit appends nothing; the doorbell rings after it.
 */
export async function createRequest<A = undefined>(
  deps: FleetDeps,
  who: Requester,
  request: ValidatedRequest,
  metadata: EventMetadata,
  read?: AnswerReader<RequestRecord, A>,
): Promise<NodeWriteOutcome<RequestRecord, A>> {
  const nodeId = request.node_id;
  return writeNode(
    deps,
    nodeId,
    async ({ state, more, reserve }) => {
      // The provisioned count changes only with a write to this node's stream (create, cancel), which this write holds.
      const provisioned = await provisionedCount(deps.db, nodeId);
      const plan = planProvision(state.status === 'Live' ? state : undefined, nodeId, who.asn, provisioned, request);
      // Ids are reserved once the plan holds: a refused request takes none.
      const [requestId] = await reserve('autopeering_request');
      const ids = await reserveProvisionIds(reserve, request.form === 'dual-plain' ? 2 : 1);
      const record: RequestRecord = {
        request_id: requestId,
        node_id: nodeId,
        asn: who.asn,
        mntner: who.mntner,
        peering_id: ids.peering_id,
        form: request.form,
        requested: request.requested,
        provision: plan.provision,
      };
      const stream = requestStream(requestId);
      const current = fold(requestDecider, (await more(stream)).events as RequestEvent[]);
      return {
        // The portal's peering is external: it names no remote node.
        commands: provisionCommands(nodeId, ids, plan, true),
        reason: `autopeering request ${requestId} by AS${who.asn} provisioned`,
        also: [{ streamId: stream, events: decideRequest({ type: 'ProvisionRequest', record }, current) }],
        result: record,
      };
    },
    metadata,
    read,
  );
}

/**
 * `DELETE /autopeering/requests/{id}` by its requester: the request is
 * cancelled and its peering (interfaces and sessions with it) removed in one
 * append, which frees the seat and the port; the node's new desired state is
 * published. Another AS's or an unknown request is 404, one no longer
 * provisioned 409.
 */
export async function cancelRequest(deps: FleetDeps, requestId: number, asn: number, metadata: EventMetadata): Promise<NodeWriteOutcome<void>> {
  const stream = requestStream(requestId);
  const before = fold(requestDecider, (await load(deps.store, stream)).events as RequestEvent[]);
  if (before.status === 'none' || before.record.asn !== asn) throw new NotFound(`unknown autopeering request ${requestId}`);
  const { node_id: nodeId, peering_id: peeringId } = before.record;
  return writeNode(
    deps,
    nodeId,
    async ({ state, more }) => {
      const current = fold(requestDecider, (await more(stream)).events as RequestEvent[]);
      const cancelled = decideRequest({ type: 'CancelRequest', request_id: requestId, by: 'requester' }, current);
      const present = state.status === 'Live' && state.peerings.some((p) => p.id === peeringId);
      return {
        commands: present ? [{ type: 'DeletePeering', node_id: nodeId, peering_id: peeringId }] : [],
        reason: `autopeering request ${requestId} cancelled by AS${asn}`,
        also: [{ streamId: stream, events: cancelled }],
        result: undefined,
      };
    },
    metadata,
  );
}
