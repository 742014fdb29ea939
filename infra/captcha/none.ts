import type { CaptchaVerifier } from './types.js';

/** No provider: every ticket is refused, so a flow that needs a captcha fails closed. */
export function noCaptcha(): CaptchaVerifier {
  return { kind: 'none', verify: async () => false };
}
