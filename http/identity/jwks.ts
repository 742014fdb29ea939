import { Type } from '@sinclair/typebox';
import { publishedKeySet } from '../../infra/identity/keys.js';
import type { ServiceContext } from '../shared/context.js';
import { ApiRouter } from '../shared/routes.js';

const Jwks = Type.Object(
  { keys: Type.Array(Type.Object({ kty: Type.Literal('OKP'), crv: Type.Literal('Ed25519'), x: Type.String(), kid: Type.String(), alg: Type.Literal('EdDSA'), use: Type.Literal('sig') })) },
  { description: 'public key set' },
);

/**
 * `GET /.well-known/jwks.json` at the root (protocol endpoint): every published
 * signing key, public parts only. Caches may keep it for 5 minutes; a new key
 * signs only after the rotation that published it, and old keys stay published
 * for hours, so a consumer that refetches on an unknown kid never misses one.
 */
export function jwksRoutes(ctx: ServiceContext): ApiRouter {
  return new ApiRouter().route({
    method: 'get',
    path: '/.well-known/jwks.json',
    summary: 'public signing keys (Ed25519, OKP)',
    tags: ['session'],
    responses: { 200: Jwks },
    handler: async (_req, res) => {
      // Public parts only, nothing decrypted; the first request of a fresh installation creates the first key, so the set is never empty.
      const keys = await publishedKeySet(ctx.pool, ctx.config, ctx.now());
      res.setHeader('Cache-Control', 'public, max-age=300');
      // Public keys: readable by a browser app of any origin, never with credentials.
      res.setHeader('Access-Control-Allow-Origin', '*');
      res.json({ keys });
    },
  });
}
