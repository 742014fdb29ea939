import {
  agentTokenDecider,
  agentTokenStream,
  issuedEvent,
  lifetimeSeconds,
  type AgentTokenEvent,
  type AgentTokenState,
  type NewToken,
} from '../domain/agent/agent-token.js';
import { AGENT_TOKEN_PREFIX, checkLiteralToken, newSecret, newTokenId } from '../domain/agent/secrets.js';
import { sha256Hex } from '../domain/sha256.js';
import { fold } from '../domain/decider.js';
import { NotFound } from '../domain/errors.js';
import type { Queryable } from '../infra/db/pool.js';
import type { EventMetadata, EventStore } from '../infra/eventstore/types.js';
import { getNode } from '../projections/fleet/queries.js';
import { execute, handleCommand, type LoadedStream } from './handle.js';

export interface AgentDeps {
  store: EventStore;
  db: Queryable;
  /** Waits for the `agents` read model where inline projections are not transactional (KurrentDB). */
  settle?: () => Promise<void>;
}

/** A freshly issued token: the full `<token_id>.<secret>` exists only here. */
export interface IssuedAgentToken {
  token: string;
  token_id: string;
  node_id: string;
  agent_id: string | null;
  issued_at: string;
  expires_at: string | null;
}

export interface IssueInput {
  /** A literal secret (the part after the dot); checked for length and entropy, else 400. */
  token?: string;
  agent_id?: string | null;
  ttl_seconds?: number | null;
  now: Date;
}

/** A new token id and secret, and what the events record of them. */
export function newAgentToken(input: IssueInput): { secret: string; parts: NewToken } {
  const secret = input.token === undefined ? newSecret() : checkLiteralToken(input.token);
  return {
    secret,
    parts: {
      token_id: newTokenId(AGENT_TOKEN_PREFIX),
      secret_sha256: sha256Hex(secret),
      agent_id: input.agent_id ?? null,
      ttl_seconds: input.ttl_seconds ?? null,
      now: input.now,
    },
  };
}

/** Issues a token bound to `nodeId`; 404 `unknown node <id>`. */
export async function issueAgentToken(deps: AgentDeps, nodeId: string, input: IssueInput, metadata: EventMetadata): Promise<IssuedAgentToken> {
  await requireNode(deps, nodeId);
  const { secret, parts } = newAgentToken(input);
  const { events } = await handleCommand(
    deps.store,
    agentTokenStream(parts.token_id),
    agentTokenDecider,
    { type: 'IssueAgentToken', node_id: nodeId, ...parts },
    metadata,
  );
  await deps.settle?.();
  return issuedOut(events[0].data as IssuedEventData, secret);
}

/**
 * Revokes the token and issues its successor for the same node and agent in one
 * append; without `ttl_seconds` the successor keeps the old token's lifetime.
 */
export async function rotateAgentToken(
  deps: AgentDeps,
  tokenId: string,
  input: { ttl_seconds?: number; now: Date },
  metadata: EventMetadata,
): Promise<IssuedAgentToken> {
  const oldStream = agentTokenStream(tokenId);
  const { result } = await execute(
    deps.store,
    [oldStream],
    async (streams, more) => {
      const old = stateOf(streams[oldStream]);
      if (old.status === 'Empty') throw new NotFound(`unknown agent token ${tokenId}`);
      await requireNode(deps, old.node_id);
      const fresh = newAgentToken({ agent_id: old.agent_id, ttl_seconds: input.ttl_seconds ?? lifetimeSeconds(old), now: input.now });
      const newStream = agentTokenStream(fresh.parts.token_id);
      await more(newStream);
      const retired = agentTokenDecider.decide({ type: 'RetireForRotation', token_id: tokenId, replaced_by: fresh.parts.token_id, now: input.now }, old);
      const issued = issuedEvent(old.node_id, fresh.parts, tokenId);
      return {
        writes: [
          { streamId: oldStream, events: retired },
          { streamId: newStream, events: [issued] },
        ],
        result: issuedOut(issued.data, fresh.secret),
      };
    },
    metadata,
  );
  await deps.settle?.();
  return result;
}

/** Revokes a token (again: no-op); 404 `unknown agent token <id>`. */
export async function revokeAgentToken(deps: AgentDeps, tokenId: string, now: Date, metadata: EventMetadata): Promise<void> {
  await handleCommand(deps.store, agentTokenStream(tokenId), agentTokenDecider, { type: 'RevokeAgentToken', token_id: tokenId, now }, metadata);
  await deps.settle?.();
}

export async function requireNode(deps: Pick<AgentDeps, 'db'>, nodeId: string): Promise<void> {
  if (!(await getNode(deps.db, nodeId))) throw new NotFound(`unknown node ${nodeId}`);
}

type IssuedEventData = Extract<AgentTokenEvent, { type: 'AgentTokenIssued' }>['data'];

export function issuedOut(data: IssuedEventData, secret: string): IssuedAgentToken {
  return {
    token: `${data.token_id}.${secret}`,
    token_id: data.token_id,
    node_id: data.node_id,
    agent_id: data.agent_id,
    issued_at: data.issued_at,
    expires_at: data.expires_at,
  };
}

function stateOf(stream: LoadedStream | undefined): AgentTokenState {
  return fold(agentTokenDecider, (stream?.events ?? []) as AgentTokenEvent[]);
}
