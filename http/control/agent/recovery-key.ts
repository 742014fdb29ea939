import { createPublicKey } from 'node:crypto';
import { sha256Hex } from '../../../domain/sha256.js';
import { Type } from '@sinclair/typebox';
import type { ServiceContext } from '../../shared/context.js';
import { AGENT, AGENT_TAGS, agentRouter } from './router.js';

/** Fingerprint of a public key: lowercase hex sha256 of its DER (SubjectPublicKeyInfo) encoding. */
export function recoveryKeyFingerprint(pem: string): string {
  const der = createPublicKey(pem).export({ type: 'spki', format: 'der' });
  return sha256Hex(der);
}

/**
 * `GET /agent/recovery-public-key`: the offline recovery key agents encrypt the
 * WireGuard private key to (`RECOVERY_PUBLIC_KEY`). Not configured: only
 * `{configured: false}`. `node_id` in the query is optional and checked like
 * `desired-state`.
 */
export function agentRecoveryKeyRoutes(ctx: ServiceContext) {
  const path = '/agent/recovery-public-key';
  const pem = ctx.config.recoveryPublicKey;
  const body = pem ? { configured: true, public_key_pem: pem, fingerprint: recoveryKeyFingerprint(pem) } : { configured: false };
  return agentRouter(ctx, [path], 'query').route({
    method: 'get',
    path,
    summary: 'the offline recovery public key (PEM) and its fingerprint (sha256 of the DER, hex)',
    security: AGENT,
    tags: AGENT_TAGS,
    query: Type.Object({ node_id: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })) }, { additionalProperties: false }),
    responses: {
      200: Type.Object({
        configured: Type.Boolean(),
        public_key_pem: Type.Optional(Type.String()),
        fingerprint: Type.Optional(Type.String({ pattern: '^[0-9a-f]{64}$' })),
      }),
      401: 'missing, wrong, expired or revoked agent token',
      403: 'node_id is not the token node',
    },
    handler: (_req, res) => {
      res.json(body);
    },
  });
}
