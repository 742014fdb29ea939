import { Type } from '@sinclair/typebox';
import { LEGACY_CAPTCHA_FIELD } from '../control/auth/login.js';
import { MAX_ASN, MIN_ASN } from '../../domain/identity/limits.js';

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
  asn: Type.Integer(),
  as_name: Type.String(),
  display_name: Type.String(),
  mntners: Type.Array(Type.String()),
  options: Type.Array(
    Type.Object({
      id: Type.String({ description: 'stable across registry syncs' }),
      kind: Method,
      method: Type.String(),
      value: Type.String({ description: 'e-mail masked' }),
      comment: Type.String(),
      mntner: Type.String(),
      captcha_required: Type.Boolean({ description: 'server policy: e-mail options need a captcha unless the captcha kind is none' }),
    }),
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
  challenge_id: Type.String(),
  method: Method,
  nonce: Type.Optional(Type.String({ description: 'ssh and pgp: the text to sign, starting with AS<asn>-' })),
  instructions: Type.String(),
  sent_to: Type.Optional(Type.String({ description: 'email: masked address' })),
  expires_at: Type.String({ format: 'date-time' }),
  reused: Type.Boolean(),
  resend_available_in: Type.Integer({ minimum: 0 }),
  captcha_pass: Type.Optional(Type.String()),
  captcha_pass_expires_in: Type.Optional(Type.Integer()),
});

export const SubmitBody = Type.Object({
  challenge_id: Type.String({ minLength: 1, maxLength: 128 }),
  answer: Type.String({ minLength: 1, maxLength: 65_536 }),
  public_key: Type.Optional(Type.String({ maxLength: 262_144, description: 'pgp only: an armored public key, the last key source' })),
});

export const SessionGrantOut = Type.Object({
  token: Type.String(),
  asn: Type.Integer(),
  mntner: Type.String(),
  method: Type.Union([Method, Type.Literal('passkey')]),
  expires_at: Type.String({ format: 'date-time' }),
  passkey_enrollment_available: Type.Boolean(),
});
