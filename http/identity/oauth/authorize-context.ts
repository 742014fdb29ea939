import { Type } from '@sinclair/typebox';
import { paramValuesOfQuery, type AuthorizationParams } from '../../../domain/identity/authorization-request.js';
import { captchaDescriptor } from '../../../infra/identity/captcha.js';
import type { ServiceContext } from '../../shared/context.js';
import type { ApiRouter } from '../../shared/routes.js';
import { checkRequest, errorRedirect, fatalError } from './check.js';
import { AuthorizationContext, ErrorRedirect } from './schemas.js';
import type { AuthorizeContextView } from '../../../domain/identity/authorize-context.js';

/** What the page shows the user for each scope it asks to approve. */
export const SCOPE_DESCRIPTIONS: Record<string, string> = {
  openid: 'Sign you in as your verified AS (maintainer and ASN)',
  profile: 'Your name from the dn42 registry',
  email: 'The e-mail address registered for your AS',
  dn42: 'Your ASN, maintainers and route objects from the dn42 registry',
};

/**
 * `GET /oauth/authorize-context`: the page forwards its own query string; the
 * answer is one of the contract's three results (valid context, error with a
 * verified redirect, or a fatal 400). Never cached: it depends on live
 * application records.
 */
export function authorizeContextRoute(router: ApiRouter, ctx: ServiceContext): void {
  router.route({
    method: 'get',
    path: '/oauth/authorize-context',
    summary: 'context of an authorization request for the page (its query string forwarded unchanged)',
    tags: ['oauth'],
    responses: {
      200: Type.Union([AuthorizationContext, ErrorRedirect]),
      400: 'client_id or redirect_uri invalid (fatal: show an error, never redirect)',
    },
    handler: async (req, res) => {
      res.setHeader('Cache-Control', 'no-store');
      const query = req.originalUrl.includes('?') ? req.originalUrl.slice(req.originalUrl.indexOf('?') + 1) : '';
      const check = await checkRequest(ctx, paramValuesOfQuery(query));
      if (check.result === 'fatal') throw fatalError(check);
      if (check.result === 'redirect') return void res.json(errorRedirect(check, ctx.config.identityIssuer));
      res.json({
        client: { name: check.client.name },
        scopes: scopesOf(check.params),
        params: { ...check.params }, // the view's open record: the normalised request as it is
        captcha: captchaDescriptor(ctx.config),
      } satisfies AuthorizeContextView);
    },
  });
}

function scopesOf(params: AuthorizationParams): { id: string; description: string }[] {
  return params.scope.split(' ').map((id) => ({ id, description: SCOPE_DESCRIPTIONS[id] ?? id }));
}
