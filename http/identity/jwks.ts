import { Type } from '@sinclair/typebox';
import { publishedKeySet } from '../../infra/identity/keys.js';
import type { ServiceContext } from '../shared/context.js';
import { ApiRouter } from '../shared/routes.js';

const Jwks = Type.Object(
  {
    keys: Type.Array(
      Type.Object({
        kty: Type.Literal('OKP', { description: 'key type (RFC 8037)' }),
        crv: Type.Literal('Ed25519', { description: 'curve' }),
        x: Type.String({ description: 'public key (base64url)' }),
        kid: Type.String({ description: 'key id, as in the token header' }),
        alg: Type.Literal('EdDSA', { description: 'the only algorithm accepted' }),
        use: Type.Literal('sig', { description: 'signing' }),
      }),
      { description: 'every published key: during a rotation the old and the new one' },
    ),
  },
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
