import { MailNotSent, issueChallenge, judgeAnswer, recordAnswer, submittableChallenge, type ChallengeDeps } from '../../commands/identity/challenges.js';
import { maintainerHasPasskeys } from '../../commands/identity/passkeys.js';
import { prepareSession } from '../../commands/identity/sessions.js';
import { TOO_MANY_ATTEMPTS } from '../../domain/identity/decide.js';
import { clientAddress } from '../shared/client-address.js';
import type { ServiceContext } from '../shared/context.js';
import { requestMetadata } from '../shared/metadata.js';
import type { ApiRouter } from '../shared/routes.js';
import { identityError, IDENTITY_ERROR } from './errors.js';
import { captchaTicket, ChallengeBody, ChallengeOut, SessionGrantOut, SubmitBody, SUBMIT_BODY_LIMIT_BYTES } from './verification-schemas.js';

/** `POST /challenge`: issues (or, within the cooldown, returns again) a challenge for one option. */
export function challengeRoute(router: ApiRouter, ctx: ServiceContext, deps: ChallengeDeps): void {
  router.route({
    method: 'post',
    path: '/challenge',
    summary: 'Issue a verification challenge for an option (captcha ticket or pass only when the option requires a captcha)',
    tags: ['verification'],
    body: ChallengeBody,
    responses: {
      201: ChallengeOut,
      400: 'captcha verification failed',
      404: 'ASN unknown or option id forged',
      422: 'invalid body',
      429: 'more than 10 challenges for the ASN in an hour',
      503: 'e-mail option without a mail sender, mail not sent, or registry unavailable',
    },
    handler: async (req, res) => {
      const now = ctx.now();
      const ip = clientAddress(req);
      res.set('cache-control', 'no-store');
      try {
        const view = await issueChallenge(
          deps,
          { asn: req.body.asn, optionId: req.body.option_id, captchaToken: captchaTicket(req.body), captchaPass: req.body.captcha_pass, remoteIp: ip, now },
          requestMetadata(req, res, now),
        );
        res.status(201).json(view);
      } catch (err) {
        if (err instanceof MailNotSent && err.pass.captcha_pass !== undefined) {
          // The pass solved with this request survives the failed mail (already logged): the retry needs no new captcha.
          res.status(503).json({ detail: err.message, error: IDENTITY_ERROR.unavailable, fatal: false, ...err.pass });
          return;
        }
        throw err;
      }
    },
  });
}

/**
 * `POST /challenge/submit`: the challenge is the credential. Order: 404 unknown,
 * 409 terminal, 410 expired; then the answer is judged (a PGP key found nowhere
 * is 422 and PGP machinery down is 503, neither counting as an attempt), then
 * recorded: wrong 400, the 5th wrong 429 (challenge failed), right: a session.
 */
export function submitRoute(router: ApiRouter, ctx: ServiceContext, deps: Pick<ChallengeDeps, 'config' | 'log' | 'store'>): void {
  router.route({
    method: 'post',
    path: '/challenge/submit',
    summary: 'Answer a challenge; returns a session grant',
    tags: ['verification'],
    body: SubmitBody,
    bodyLimit: SUBMIT_BODY_LIMIT_BYTES,
    responses: {
      200: SessionGrantOut,
      400: 'wrong answer',
      404: 'challenge does not exist',
      409: 'challenge already terminal (superseded, used or failed)',
      410: 'challenge expired',
      422: 'invalid body, or pgp key found nowhere',
      429: 'fifth wrong answer: the challenge failed',
      503: 'pgp verification unavailable',
    },
    handler: async (req, res) => {
      const now = ctx.now();
      res.set('cache-control', 'no-store');
      const challenge = await submittableChallenge(deps.store, req.body.challenge_id, now);
      const judged = await judgeAnswer(deps, challenge, { text: req.body.answer, publicKey: req.body.public_key });
      if ('refused' in judged) throw identityError(judged.refused.status, judged.refused.detail);
      const metadata = requestMetadata(req, res, now);
      if (!judged.verdict.ok) {
        const recorded = await recordAnswer(deps.store, challenge.challengeId, judged.verdict, now, metadata);
        if (recorded.outcome === 'failed') throw identityError(429, TOO_MANY_ATTEMPTS);
        throw identityError(400, judged.detail!, IDENTITY_ERROR.wrongAnswer);
      }
      // Everything that can fail comes before the one append of success and session record: a failure leaves the challenge open.
      const { asn, mntner, method } = challenge;
      const session = await prepareSession(ctx, { asn, mntner, method });
      const passkeyEnrollmentAvailable = !(await maintainerHasPasskeys(ctx, mntner));
      await recordAnswer(deps.store, challenge.challengeId, judged.verdict, now, { ...metadata, actor: session.actor }, session.write);
      res.json({ ...session.grant, passkey_enrollment_available: passkeyEnrollmentAvailable });
    },
  });
}
