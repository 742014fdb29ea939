import { expect } from 'chai';
import { agentTokenDecider, lifetimeSeconds, type AgentTokenEvent } from '../../../domain/agent/agent-token.js';
import { checkLiteralToken, estimatedBits, INVALID_LITERAL, newSecret, parseAgentToken } from '../../../domain/agent/secrets.js';
import { BadReference, IllegalState, NotFound } from '../../../domain/errors.js';
import { given } from '../../support/given.js';

const now = new Date('2026-11-01T12:00:00Z');
const later = new Date('2026-11-01T12:30:00Z');
const issued: AgentTokenEvent = {
  type: 'AgentTokenIssued',
  data: {
    token_id: 'agt_1',
    node_id: 'fra1',
    agent_id: null,
    secret_sha256: 'ab',
    issued_at: now.toISOString(),
    expires_at: '2026-11-01T13:00:00.000Z',
    rotated_from: null,
  },
};
const revoked = (replaced_by: string | null): AgentTokenEvent => ({
  type: 'AgentTokenRevoked',
  data: { token_id: 'agt_1', node_id: 'fra1', revoked_at: later.toISOString(), replaced_by },
});

describe('agent token decider', () => {
  it('issues a token with its expiry from ttl_seconds', () => {
    given(agentTokenDecider, [])
      .when({ type: 'IssueAgentToken', node_id: 'fra1', token_id: 'agt_1', secret_sha256: 'ab', agent_id: null, ttl_seconds: 3600, now })
      .then([issued]);
  });

  it('revokes an active token; revoking again decides nothing; an unknown token is not found', () => {
    given(agentTokenDecider, [issued])
      .when({ type: 'RevokeAgentToken', token_id: 'agt_1', now: later })
      .then([revoked(null)]);
    given(agentTokenDecider, [issued, revoked(null)])
      .when({ type: 'RevokeAgentToken', token_id: 'agt_1', now: later })
      .then([]);
    given(agentTokenDecider, []).when({ type: 'RevokeAgentToken', token_id: 'agt_9', now }).thenThrows(NotFound, 'unknown agent token agt_9');
  });

  it('retires an active token for a rotation, but not a revoked one', () => {
    given(agentTokenDecider, [issued])
      .when({ type: 'RetireForRotation', token_id: 'agt_1', replaced_by: 'agt_2', now: later })
      .then([revoked('agt_2')]);
    given(agentTokenDecider, [issued, revoked(null)])
      .when({ type: 'RetireForRotation', token_id: 'agt_1', replaced_by: 'agt_2', now: later })
      .thenThrows(IllegalState, 'agent token agt_1 is revoked; issue a new one');
  });

  it('keeps the lifetime of the old token on rotation', () => {
    given(agentTokenDecider, [issued])
      .when({ type: 'RevokeAgentToken', token_id: 'agt_1', now })
      .thenState((state) => {
        expect(state.status).to.equal('Revoked');
        if (state.status !== 'Empty') expect(lifetimeSeconds(state)).to.equal(3600);
      });
  });
});

describe('agent token secrets', () => {
  it('parses agt_<suffix>.<secret> and nothing else', () => {
    expect(parseAgentToken('agt_0123abcd.s3cr3t-_x')).to.deep.equal({ tokenId: 'agt_0123abcd', secret: 's3cr3t-_x' });
    for (const bad of ['agt_.x', 'agt_a', 'agt_a.', 'enr_a.b', 'agt_a.b.c', 'agt_a.b c', ' agt_a.b']) expect(parseAgentToken(bad), bad).to.equal(undefined);
  });

  it('accepts every generated secret as a literal and refuses low-entropy ones', () => {
    for (let i = 0; i < 2000; i++) checkLiteralToken(newSecret());
    expect(() => checkLiteralToken('Aa0'.repeat(20))).to.throw(BadReference, INVALID_LITERAL);
    // The boundary: four symbols evenly used over 64 characters carry exactly 128 bits.
    expect(estimatedBits('Aa0-'.repeat(16))).to.equal(128);
    expect(checkLiteralToken('Aa0-'.repeat(16))).to.equal('Aa0-'.repeat(16));
    expect(() => checkLiteralToken('Aa0-'.repeat(16).slice(1))).to.throw(BadReference);
    expect(estimatedBits('a'.repeat(100))).to.equal(0);
  });
});
