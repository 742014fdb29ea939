import { takesBlockedPrefixes } from '../../domain/fleet-ops/agent-gate.js';
import { blockablePrefix, blocks, withBlock, withoutBlock } from '../../domain/fleet-ops/prefix-block.js';
import type { LiveNode } from '../../domain/node/state.js';
import type { Queryable } from '../../infra/db/pool.js';
import type { EventMetadata } from '../../infra/eventstore/types.js';
import { agentStatuses } from '../../infra/telemetry/liveness.js';
import type { FleetDeps } from '../fleet-write.js';
import { namedNodes } from './targets.js';
import { liveNodes, writeNodes, type NodeChanges } from '../node-write.js';

/** A node whose agent reported a version that cannot take blocked prefixes yet: its document leaves them out. */
export interface DeferredNode {
  node_id: string;
  agent_version: string;
}

export interface PrefixMitigationResult {
  prefix: string;
  /** Nodes still carrying the block after the write, sorted. */
  nodes: string[];
  changed: Record<string, number>;
  /** Nodes among `nodes` whose documents withhold the block until their agent reports 1.0.187 or later. */
  deferred: DeferredNode[];
}

export interface PrefixMitigationInput {
  prefix: string;
  nodes?: string[];
}

/** `POST /fleet/mitigations/prefix-block`: the named nodes, or every non-decommissioned node. */
export function blockPrefix(deps: FleetDeps, input: PrefixMitigationInput, metadata: EventMetadata): Promise<PrefixMitigationResult> {
  return writePrefix(deps, input, 'block', metadata);
}

/** `POST /fleet/mitigations/prefix-unblock`: the named nodes, or every node carrying it (decommissioned ones too). */
export function unblockPrefix(deps: FleetDeps, input: PrefixMitigationInput, metadata: EventMetadata): Promise<PrefixMitigationResult> {
  return writePrefix(deps, input, 'unblock', metadata);
}

async function writePrefix(deps: FleetDeps, input: PrefixMitigationInput, how: 'block' | 'unblock', metadata: EventMetadata): Promise<PrefixMitigationResult> {
  const prefix = blockablePrefix(input.prefix);
  const change = how === 'block' ? withBlock : withoutBlock;
  const outcome = await writeNodes(
    deps,
    (states) => {
      const live = liveNodes(states);
      const targets = input.nodes ? namedNodes(states, input.nodes) : how === 'block' ? live.filter((n) => n.lifecycle === 'active') : live;
      const templates = new Map<string, Record<string, unknown>>();
      const nodes = new Map<string, NodeChanges>();
      for (const node of targets) {
        const template = change(node.fields.base_template, prefix);
        if (!template) continue;
        templates.set(node.node_id, template);
        nodes.set(node.node_id, { commands: [{ type: 'UpdateNode', node_id: node.node_id, changes: { base_template: template } }] });
      }
      const carriers = live.filter((n: LiveNode) => blocks(templates.get(n.node_id) ?? n.fields.base_template, prefix)).map((n) => n.node_id);
      return { nodes, reason: `fleet: prefix ${how} ${prefix}`, result: carriers };
    },
    metadata,
  );
  return { prefix, nodes: outcome.result, changed: outcome.generations, deferred: await deferredOf(deps.db, outcome.result) };
}

/** The nodes among `nodeIds` whose agent last reported a version below 1.0.187. */
export async function deferredOf(db: Queryable, nodeIds: readonly string[]): Promise<DeferredNode[]> {
  if (nodeIds.length === 0) return [];
  return (await agentStatuses(db, nodeIds))
    .filter((s) => !takesBlockedPrefixes(s.agent_version))
    .map((s) => ({ node_id: s.node_id, agent_version: s.agent_version! }));
}
