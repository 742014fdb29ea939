// STUB — owned by the websocket-hub helper, who replaces the bodies. Signatures are the agreed interface.
import type { ServiceContext } from '../../http/shared/context.js';

/** Agent connections of the node on every server instance (the permanent `WS /agent/ws/{node_id}` channel). */
export async function onlineAgentCount(_ctx: ServiceContext, _nodeId: string): Promise<number> {
  throw new Error('onlineAgentCount: not implemented yet');
}
