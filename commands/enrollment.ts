import { enrollmentDecider, enrollmentTokenStream } from '../domain/agent/enrollment.js';
import { checkLiteralToken, ENROLLMENT_TOKEN_PREFIX, newSecret, newTokenId } from '../domain/agent/secrets.js';
import { sha256Hex } from '../domain/sha256.js';
import { BadReference, NotFound, Validation } from '../domain/errors.js';
import type { EventMetadata } from '../infra/eventstore/types.js';
import { getEnrollmentToken, type EnrollmentTokenOut } from '../projections/agents/queries.js';
import { getNode } from '../projections/fleet/queries.js';
import type { AgentDeps } from './agent-tokens.js';
import { handleCommand } from './handle.js';

export interface CreateEnrollmentInput {
  /** A literal secret: 400 unless long and varied enough; 409 when a live token already has it. */
  token?: string;
  node_id?: string | null;
  description?: string | null;
  expires_at?: string | null;
  now: Date;
}

/** EnrollmentTokenCreated: the metadata plus the plaintext `secret`, shown only here. */
export type CreatedEnrollmentToken = EnrollmentTokenOut & { secret: string };

export async function createEnrollmentToken(deps: AgentDeps, input: CreateEnrollmentInput, metadata: EventMetadata): Promise<CreatedEnrollmentToken> {
  const secret = input.token === undefined ? newSecret() : checkLiteralToken(input.token);
  const nodeId = input.node_id ?? null;
  if (nodeId !== null && !(await getNode(deps.db, nodeId))) throw new BadReference(`unknown node ${nodeId}`);
  const expiresAt = input.expires_at ? new Date(input.expires_at) : null;
  if (expiresAt && expiresAt.getTime() <= input.now.getTime()) {
    throw new Validation('invalid expires_at: must lie in the future', [{ loc: ['body', 'expires_at'], msg: 'must lie in the future', type: 'future' }]);
  }
  const secretSha256 = sha256Hex(secret);
  const { events } = await handleCommand(
    deps.store,
    enrollmentTokenStream(secretSha256),
    enrollmentDecider,
    {
      type: 'CreateEnrollmentToken',
      token_id: newTokenId(ENROLLMENT_TOKEN_PREFIX),
      secret_sha256: secretSha256,
      node_id: nodeId,
      description: input.description ?? null,
      expires_at: expiresAt,
      now: input.now,
    },
    metadata,
  );
  await deps.settle?.();
  const created = events[0];
  if (created.type !== 'EnrollmentTokenCreated') throw new Error('expected EnrollmentTokenCreated');
  const d = created.data;
  return { token_id: d.token_id, node_id: d.node_id, description: d.description, expires_at: d.expires_at, used_at: null, created_at: d.created_at, secret };
}

/** Deletes a token, used or not; 404 `unknown enrollment token <id>`. */
export async function deleteEnrollmentToken(deps: AgentDeps, tokenId: string, now: Date, metadata: EventMetadata): Promise<void> {
  // The token id is not secret and not the stream key; the read model knows which hash it has.
  const known = await getEnrollmentToken(deps.db, tokenId);
  if (!known) throw new NotFound(`unknown enrollment token ${tokenId}`);
  await handleCommand(
    deps.store,
    enrollmentTokenStream(known.secret_sha256),
    enrollmentDecider,
    { type: 'DeleteEnrollmentToken', token_id: tokenId, now },
    metadata,
  );
  await deps.settle?.();
}
