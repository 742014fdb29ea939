import { unreachable, type Decider, type DomainEvent } from '../decider.js';
import { IllegalState, NotFound } from '../errors.js';

/**
 * An agent token in its `agent-token-<token_id>` stream. The token is
 * `<token_id>.<secret>`; only the sha256 of the secret is ever recorded.
 */
export type AgentTokenIssued = DomainEvent<
  'AgentTokenIssued',
  {
    token_id: string;
    node_id: string;
    agent_id: string | null;
    secret_sha256: string;
    issued_at: string;
    expires_at: string | null;
    /** The token this one replaced (rotation), else null. */
    rotated_from: string | null;
  }
>;

/** Revoked by an administrator, or replaced by a rotation (`replaced_by`). */
export type AgentTokenRevoked = DomainEvent<'AgentTokenRevoked', { token_id: string; node_id: string; revoked_at: string; replaced_by: string | null }>;

export type AgentTokenEvent = AgentTokenIssued | AgentTokenRevoked;
export const AGENT_TOKEN_EVENT_TYPES: readonly AgentTokenEvent['type'][] = ['AgentTokenIssued', 'AgentTokenRevoked'];

export const agentTokenStream = (tokenId: string): string => `agent-token-${tokenId}`;

export interface IssuedToken {
  token_id: string;
  node_id: string;
  agent_id: string | null;
  issued_at: string;
  expires_at: string | null;
}

export type AgentTokenState = { status: 'Empty' } | ({ status: 'Active' } & IssuedToken) | ({ status: 'Revoked'; revoked_at: string } & IssuedToken);

export function evolveAgentToken(state: AgentTokenState, event: AgentTokenEvent): AgentTokenState {
  switch (event.type) {
    case 'AgentTokenIssued': {
      const { token_id, node_id, agent_id, issued_at, expires_at } = event.data;
      return { status: 'Active', token_id, node_id, agent_id, issued_at, expires_at };
    }
    case 'AgentTokenRevoked':
      if (state.status !== 'Active') return state;
      return { ...state, status: 'Revoked', revoked_at: event.data.revoked_at };
    default:
      return unreachable(event);
  }
}

/** What an issued token needs that `decide` may not make itself: ids, the secret's hash and the time. */
export interface NewToken {
  token_id: string;
  secret_sha256: string;
  agent_id: string | null;
  now: Date;
  ttl_seconds: number | null;
}

export type AgentTokenCommand =
  | ({ type: 'IssueAgentToken'; node_id: string } & NewToken)
  | { type: 'RevokeAgentToken'; token_id: string; now: Date }
  /** Decided on the old token's stream; the new token's `AgentTokenIssued` comes from `issuedEvent`. */
  | { type: 'RetireForRotation'; token_id: string; replaced_by: string; now: Date };

export function decideAgentToken(command: AgentTokenCommand, state: AgentTokenState): AgentTokenEvent[] {
  switch (command.type) {
    case 'IssueAgentToken':
      if (state.status !== 'Empty') throw new IllegalState(`agent token ${command.token_id} already exists`);
      return [issuedEvent(command.node_id, command, null)];
    case 'RevokeAgentToken': {
      const token = existing(state, command.token_id);
      // Revoking twice is not an error: the token is revoked either way.
      if (token.status === 'Revoked') return [];
      return [
        { type: 'AgentTokenRevoked', data: { token_id: token.token_id, node_id: token.node_id, revoked_at: command.now.toISOString(), replaced_by: null } },
      ];
    }
    case 'RetireForRotation': {
      const token = existing(state, command.token_id);
      if (token.status === 'Revoked') throw new IllegalState(`agent token ${command.token_id} is revoked; issue a new one`);
      return [
        {
          type: 'AgentTokenRevoked',
          data: { token_id: token.token_id, node_id: token.node_id, revoked_at: command.now.toISOString(), replaced_by: command.replaced_by },
        },
      ];
    }
    default:
      return unreachable(command);
  }
}

export function issuedEvent(nodeId: string, token: NewToken, rotatedFrom: string | null): AgentTokenIssued {
  const expires = token.ttl_seconds === null ? null : new Date(token.now.getTime() + token.ttl_seconds * 1000).toISOString();
  return {
    type: 'AgentTokenIssued',
    data: {
      token_id: token.token_id,
      node_id: nodeId,
      agent_id: token.agent_id,
      secret_sha256: token.secret_sha256,
      issued_at: token.now.toISOString(),
      expires_at: expires,
      rotated_from: rotatedFrom,
    },
  };
}

/** The lifetime a rotation keeps when it is not given one: the old token's, none if it had none. */
export function lifetimeSeconds(token: IssuedToken): number | null {
  if (token.expires_at === null) return null;
  return Math.max(1, Math.round((Date.parse(token.expires_at) - Date.parse(token.issued_at)) / 1000));
}

function existing(state: AgentTokenState, tokenId: string): Exclude<AgentTokenState, { status: 'Empty' }> {
  if (state.status === 'Empty') throw new NotFound(`unknown agent token ${tokenId}`);
  return state;
}

export const agentTokenDecider: Decider<AgentTokenCommand, AgentTokenEvent, AgentTokenState> = {
  initialState: () => ({ status: 'Empty' }),
  evolve: evolveAgentToken,
  decide: decideAgentToken,
};
