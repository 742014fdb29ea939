import { join } from 'node:path';

/**
 * Where the agent keeps its state (agent/README.md, "State directory"). One
 * state directory serves one enrolled node; offline runs for other nodes get
 * their own `nodes/<node_id>` folder beside it.
 */
export interface StateLayout {
  /** `{node_id, agent_id}` of the enrollment, 0600. */
  enrollment: string;
  /** The agent token `agt_<id>.<secret>`, 0600. */
  token: string;
  node(nodeId: string): NodeLayout;
}

export interface NodeLayout {
  dir: string;
  /** Default rendered directory. */
  rendered: string;
  /** Copy of the files of the last successful apply, restored when an apply fails. */
  lastGood: string;
  /** `{generation, status, desired, failures}` of the latest apply attempt. */
  applied: string;
  /** The node's WireGuard private key (base64), generated once, 0600. */
  wireguardKey: string;
}

export function stateLayout(stateDir: string): StateLayout {
  return {
    enrollment: join(stateDir, 'agent.json'),
    token: join(stateDir, 'agent-token'),
    node: (nodeId) => {
      const dir = join(stateDir, 'nodes', nodeId);
      return { dir, rendered: join(dir, 'rendered'), lastGood: join(dir, 'last-good'), applied: join(dir, 'applied.json'), wireguardKey: join(dir, 'wireguard-private.key') };
    },
  };
}
