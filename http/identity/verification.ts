import { listVerificationOptions, type OptionsDeps } from '../../commands/identity/verification.js';
import { NotFound } from '../../domain/errors.js';
import { clientAddress } from '../shared/client-address.js';
import { emptyReplicaWarner } from './admin/registry.js';
import type { ServiceContext } from '../shared/context.js';
import type { ApiRouter } from '../shared/routes.js';
import { captchaTicket, OptionsBody, OptionsOut } from './verification-schemas.js';

/** `POST /verification-options`: the ASN's verification options, e-mail masked, never cached. */
export function verificationOptionsRoute(router: ApiRouter, ctx: ServiceContext, deps: OptionsDeps): void {
  const warnIfEmpty = emptyReplicaWarner(ctx);
  router.route({
    method: 'post',
    path: '/verification-options',
    summary: 'Verification options of an ASN (captcha ticket required unless the captcha kind is none)',
    tags: ['verification'],
    body: OptionsBody,
    responses: {
      200: OptionsOut,
      400: 'captcha verification failed',
      404: 'ASN not in the registry',
      422: 'ASN syntax invalid or out of range',
      429: '5 failed captchas in 15 minutes from this address',
      503: 'registry replica unavailable',
    },
    handler: async (req, res) => {
      res.set('cache-control', 'no-store');
      try {
        res.json(await listVerificationOptions(deps, { asn: req.body.asn, ticket: captchaTicket(req.body), remoteIp: clientAddress(req), now: ctx.now() }));
      } catch (err) {
        if (err instanceof NotFound) await warnIfEmpty();
        throw err;
      }
    },
  });
}
