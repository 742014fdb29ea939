import { Type } from '@sinclair/typebox';

/** A proof-of-work puzzle as altcha-lib issues it (the control login's and the identity service's). */
export const AltchaChallenge = Type.Object({ parameters: Type.Object({}, { additionalProperties: true }), signature: Type.String() }, { description: 'an ALTCHA challenge' });
