import { paramValuesOfParams, redirectWith } from '../../../domain/identity/authorization-request.js';
import type { ServiceContext } from '../../shared/context.js';
import { requestMetadata } from '../../shared/metadata.js';
import type { ApiRouter } from '../../shared/routes.js';
import { identityError } from '../errors.js';
import type { ProviderDeps } from '../oidc/configuration.js';
import { issueCode } from '../oidc/issue-code.js';
import type { OidcProviders } from '../oidc/provider.js';
import { requireSession, sessionOf } from '../require-session.js';
import { checkRequest, errorRedirect, fatalError } from './check.js';
import { ApproveBody, ApproveResult, ErrorRedirect } from './schemas.js';

/**
 * `POST /oauth/approve` (Bearer session JWT): the page posts `params` back with
 * `deny`. The request is checked again (the page is not trusted to have kept
 * it); then the code is issued for the session's identity, or the user's
 * refusal is sent back as `access_denied`. Both go to the verified redirect URI
 * with the request's state and the issuer.
 */
export function approveRoute(router: ApiRouter, ctx: ServiceContext, providers: OidcProviders, deps: ProviderDeps): void {
  router.router.post('/oauth/approve', requireSession(ctx));
  router.route({
    method: 'post',
    path: '/oauth/approve',
    summary: 'approve (or deny) an authorization request: answers the redirect with code and state',
    tags: ['oauth'],
    security: ['session'],
    body: ApproveBody,
    responses: {
      200: ApproveResult,
      400: 'client_id or redirect_uri invalid (fatal), or a session without maintainer',
      401: 'missing or invalid session token',
    },
    handler: async (req, res) => {
      res.setHeader('Cache-Control', 'no-store');
      const session = sessionOf(res);
      const { deny, ...params } = req.body;
      const check = await checkRequest(ctx, paramValuesOfParams(params));
      if (check.result === 'fatal') throw fatalError(check);
      if (check.result === 'redirect') return void res.status(200).json(errorRedirect(check, ctx.config.identityIssuer) satisfies typeof ErrorRedirect.static);
      const { params: checked } = check;
      const issuer = ctx.config.identityIssuer;
      if (deny) {
        return void res.json({
          redirect_to: redirectWith(checked.redirect_uri, {
            error: 'access_denied',
            error_description: 'the user denied the request',
            state: checked.state,
            iss: issuer,
          }),
        });
      }
      if (!session.mnt) throw identityError(400, 'session token names no maintainer');
      const code = await issueCode(providers, deps, checked, { ...session, mnt: session.mnt }, requestMetadata(req, res, ctx.now()));
      res.json({ redirect_to: redirectWith(checked.redirect_uri, { code, state: checked.state, iss: issuer }) });
    },
  });
}
