import { Type } from '@sinclair/typebox';
import { deregisterOAuthClient, registerOAuthClient } from '../../../commands/identity/oauth-clients.js';
import { activeClients } from '../../../projections/oidc/queries.js';
import type { ServiceContext } from '../../shared/context.js';
import { requestMetadata } from '../../shared/metadata.js';
import type { ApiRouter } from '../../shared/routes.js';
import type { ProviderDeps } from '../oidc/configuration.js';
import { KiB } from '../../shared/body-limit.js';

const NewClient = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    redirect_uris: Type.Array(Type.String({ minLength: 1, maxLength: 2000 }), {
      minItems: 1,
      maxItems: 20,
      description: 'https only; plain http only for loopback; exact match',
    }),
    confidential: Type.Boolean({ description: 'confidential clients get a client_secret, shown once' }),
  },
  { additionalProperties: false },
);

const ClientOut = Type.Object({
  client_id: Type.String({ description: 'issued at registration' }),
  name: Type.String({ description: 'given at registration' }),
  redirect_uris: Type.Array(Type.String(), { description: 'matched exactly' }),
  confidential: Type.Boolean({ description: 'confidential clients have a client_secret' }),
});
const Registered = Type.Object({
  ...ClientOut.properties,
  client_secret: Type.Optional(Type.String({ description: 'confidential only; this is the only time it is shown' })),
});
const ClientParams = Type.Object({ client_id: Type.String({ minLength: 1, maxLength: 200 }) });

/** `/admin/oauth-clients`: register, list, deregister OAuth applications (admin token). */
export function oauthClientRoutes(router: ApiRouter, ctx: ServiceContext, deps: ProviderDeps): void {
  router
    .route({
      method: 'post',
      path: '/admin/oauth-clients',
      summary: 'register an OAuth application (a confidential one gets its secret here, once)',
      tags: ['admin'],
      security: ['admin'],
      body: NewClient,
      // 20 redirect URIs of up to 2,000 characters: 40 KB in ASCII, up to three times that in other scripts.
      bodyLimit: 128 * KiB,
      responses: { 201: Registered, 401: 'missing or invalid admin token', 403: 'IDENTITY_ADMIN_TOKEN not configured', 422: 'invalid redirect_uri' },
      handler: async (req, res) => {
        res.setHeader('Cache-Control', 'no-store');
        res.status(201).json(await registerOAuthClient(deps, req.body, requestMetadata(req, res, ctx.now())));
      },
    })
    .route({
      method: 'get',
      path: '/admin/oauth-clients',
      summary: 'the registered OAuth applications (never a secret)',
      tags: ['admin'],
      security: ['admin'],
      responses: {
        200: Type.Object({ clients: Type.Array(ClientOut, { description: 'registered applications' }) }),
        401: 'missing or invalid admin token',
        403: 'IDENTITY_ADMIN_TOKEN not configured',
      },
      handler: async (_req, res) => {
        const clients = await activeClients(ctx.pool);
        res.json({ clients: clients.map(({ client_id, name, redirect_uris, confidential }) => ({ client_id, name, redirect_uris, confidential })) });
      },
    })
    .route({
      method: 'delete',
      path: '/admin/oauth-clients/{client_id}',
      summary: 'deregister an OAuth application; revokes all its refresh tokens (and grants, codes, access tokens)',
      tags: ['admin'],
      security: ['admin'],
      params: ClientParams,
      responses: { 204: 'deregistered', 401: 'missing or invalid admin token', 403: 'IDENTITY_ADMIN_TOKEN not configured', 404: 'unknown oauth client' },
      handler: async (req, res) => {
        await deregisterOAuthClient(deps, req.params.client_id, requestMetadata(req, res, ctx.now()));
        res.status(204).end();
      },
    });
}
