import { Type } from '@sinclair/typebox';
import { LEGACY_CAPTCHA_FIELD } from '../control/auth/login.js';
import { MAX_ASN, MIN_ASN } from '../../domain/identity/limits.js';
import { KiB } from '../shared/body-limit.js';

export { LEGACY_CAPTCHA_FIELD };

export const Asn = Type.Integer({ minimum: MIN_ASN, maximum: MAX_ASN, description: 'autonomous system number, 1 to 4294967295' });
const Ticket = Type.String({ maxLength: 8192 });
const Method = Type.Union([Type.Literal('email'), Type.Literal('pgp'), Type.Literal('ssh')]);

/** The ticket under its name or its provider-branded legacy alias (the same field). */
export function captchaTicket(body: { captcha_token?: string; [LEGACY_CAPTCHA_FIELD]?: string }): string | undefined {
  return body.captcha_token ?? body[LEGACY_CAPTCHA_FIELD];
}

export const OptionsBody = Type.Object({
  asn: Asn,
  captcha_token: Type.Optional(Ticket),
  [LEGACY_CAPTCHA_FIELD]: Type.Optional({ ...Ticket, description: 'legacy alias of captcha_token' }),
});

export const OptionsOut = Type.Object({
  asn: Type.Integer({ description: 'the ASN asked about' }),
  as_name: Type.String({ description: 'its as-name in the registry' }),
  display_name: Type.String({ description: 'what the page shows for the AS' }),
  mntners: Type.Array(Type.String(), { description: 'maintainers of the AS' }),
  options: Type.Array(
    Type.Object({
      id: Type.String({ description: 'stable across registry syncs; a challenge refers to an option by this id' }),
      kind: { ...Method, description: '`email`, `pgp` or `ssh`' },
      method: Type.String({ description: 'method label' }),
      value: Type.String({ description: 'for email: masked (first characters, `***`, domain), never the plain address' }),
      comment: Type.String({ description: 'label' }),
      mntner: Type.String({ description: 'maintainer the option comes from' }),
      captcha_required: Type.Boolean({ description: 'server policy: e-mail options need a captcha unless the captcha kind is none' }),
    }),
    { description: 'the ways to prove control of the ASN' },
  ),
});

export const ChallengeBody = Type.Object({
  asn: Asn,
  option_id: Type.String({ minLength: 1, maxLength: 128 }),
  captcha_token: Type.Optional(Ticket),
  [LEGACY_CAPTCHA_FIELD]: Type.Optional({ ...Ticket, description: 'legacy alias of captcha_token' }),
  captcha_pass: Type.Optional(Type.String({ maxLength: 256 })),
});

export const ChallengeOut = Type.Object({
  challenge_id: Type.String({ description: 'refers to the challenge in submit' }),
  method: { ...Method, description: '`email`, `pgp` or `ssh`' },
  nonce: Type.Optional(Type.String({ description: 'ssh and pgp: the text to sign, starting with AS<asn>-' })),
  instructions: Type.String({ description: 'what the user does next' }),
  sent_to: Type.Optional(Type.String({ description: 'email: masked address' })),
  expires_at: Type.String({ format: 'date-time', description: 'the challenge lives 15 minutes' }),
  reused: Type.Boolean({ description: 'true when an in-flight challenge was returned again' }),
  resend_available_in: Type.Integer({ minimum: 0, description: 'seconds until a new challenge may be issued for the same option' }),
  captcha_pass: Type.Optional(Type.String({ description: 'only present right after a captcha was solved; bound to that ASN' })),
  captcha_pass_expires_in: Type.Optional(Type.Integer({ description: 'seconds; about 1800' })),
});

/**
 * Body limit of `POST /challenge/submit`: an answer of 65,536 characters and an armored
 * public key of 262,144 (both ASCII, their newlines escaped) come to about 333 KB.
 */
export const SUBMIT_BODY_LIMIT_BYTES = 512 * KiB;

export const SubmitBody = Type.Object({
  challenge_id: Type.String({ minLength: 1, maxLength: 128 }),
  answer: Type.String({ minLength: 1, maxLength: 65_536 }),
  public_key: Type.Optional(Type.String({ maxLength: 262_144, description: 'pgp only: an armored public key, the last key source' })),
});

/** The session grant's fields (document 1, "Session grant"), shared with the passkey login. */
export const sessionGrantFields = {
  token: Type.String({ description: 'session JWT; plaintext returned only here' }),
  asn: Type.Integer({ description: 'the verified ASN' }),
  mntner: Type.String({ description: 'the verified maintainer' }),
  expires_at: Type.String({ format: 'date-time', description: 'the token lives 2 hours' }),
};

export const SessionGrantOut = Type.Object({
  ...sessionGrantFields,
  method: Type.Union([Method, Type.Literal('passkey')], { description: 'how the identity was proven' }),
  passkey_enrollment_available: Type.Boolean({ description: 'true when the maintainer has no passkey yet' }),
});
