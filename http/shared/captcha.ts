import { Type } from '@sinclair/typebox';

/** A proof-of-work puzzle as altcha-lib issues it (the control login's and the identity service's). */
export const AltchaChallenge = Type.Object(
  {
    parameters: Type.Object({}, { additionalProperties: true, description: 'the proof-of-work parameters (ALTCHA): algorithm, salt, cost, expiry' }),
    signature: Type.String({ description: 'HMAC of the parameters; the solved ticket carries it back' }),
  },
  { description: 'an ALTCHA challenge' },
);
