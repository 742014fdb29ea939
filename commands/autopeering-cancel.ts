import { decideRequest, requestDecider } from '../domain/autopeering/request-decide.js';
import { requestStream, type RequestEvent } from '../domain/autopeering/request.js';
import { fold } from '../domain/decider.js';
import type { Queryable } from '../infra/db/pool.js';
import { listRequests } from '../projections/autopeering/queries.js';
import type { LoadMore } from './handle.js';
import type { StreamEvents } from './node-write.js';

/**
 * An operator removing peerings (one peering, or a whole node) cancels the
 * provisioned portal requests they belong to, as writes of the same
 * append (document 2: reject reason `removed by operator`, seat and (asn, node)
 * slot freed). The read model finds the candidates; each request stream is
 * loaded through `more` (the append checks its version) and confirmed there.
 */
export async function cancelRequestsOfPeerings(db: Queryable, more: LoadMore, nodeId: string, peeringIds: readonly number[] | 'all'): Promise<StreamEvents[]> {
  const active = await listRequests(db, { status: 'provisioned', nodeId });
  const out: StreamEvents[] = [];
  for (const candidate of active) {
    if (peeringIds !== 'all' && !peeringIds.includes(candidate.peering_id)) continue;
    const stream = requestStream(candidate.id);
    const state = fold(requestDecider, (await more(stream)).events as RequestEvent[]);
    if (state.status !== 'provisioned' || state.record.node_id !== nodeId || (peeringIds !== 'all' && !peeringIds.includes(state.record.peering_id))) continue;
    out.push({ streamId: stream, events: decideRequest({ type: 'CancelRequest', request_id: candidate.id, by: 'operator' }, state) });
  }
  return out;
}
