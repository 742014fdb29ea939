import type { VerificationMethod } from './events.js';

/**
 * The server's captcha policy per option (`captcha_required`): an e-mail option
 * sends mail to a registered mailbox, so it needs a captcha; an SSH or PGP option
 * only hands out a nonce to sign and sends nothing, so it does not. With the
 * captcha kind `none` nothing needs one.
 */
export function captchaRequired(method: VerificationMethod, captchaEnabled: boolean): boolean {
  return captchaEnabled && method === 'email';
}
