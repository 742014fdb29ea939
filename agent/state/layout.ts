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
  /** The ROA set last fetched from the control server, with its entity tag (`agent/rpki/held.ts`). */
  roas: string;
}

/** The registration's node id rule: a node id names a folder, so it must not climb out of `nodes/`. */
const SAFE_NODE_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

export function stateLayout(stateDir: string): StateLayout {
  return {
    enrollment: join(stateDir, 'agent.json'),
    token: join(stateDir, 'agent-token'),
    node: (nodeId) => {
      if (!SAFE_NODE_ID.test(nodeId)) throw new Error(`invalid node id ${JSON.stringify(nodeId)}: letters, digits, '.', '_', '-'`);
      const dir = join(stateDir, 'nodes', nodeId);
      return {
        dir,
        rendered: join(dir, 'rendered'),
        lastGood: join(dir, 'last-good'),
        applied: join(dir, 'applied.json'),
        wireguardKey: join(dir, 'wireguard-private.key'),
        roas: join(dir, 'roas.json'),
      };
    },
  };
}
