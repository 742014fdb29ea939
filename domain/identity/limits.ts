/** The contract's limits for ASN verification (document 1, Limits). */
export const CHALLENGE_LIFETIME_MS = 15 * 60_000;
export const RESEND_COOLDOWN_MS = 60_000;
export const CHALLENGES_PER_ASN_PER_HOUR = 10;
export const CHALLENGE_RATE_WINDOW_MS = 3_600_000;
export const MAX_SUBMIT_ATTEMPTS = 5;
export const CAPTCHA_PASS_LIFETIME_MS = 1800_000;
export const CAPTCHA_FAILURES_PER_IP = 5;
export const CAPTCHA_FAILURE_WINDOW_S = 15 * 60;
export const MIN_ASN = 1;
export const MAX_ASN = 4_294_967_295;
/** The SSHSIG namespace a challenge answer must be signed in. */
export const SSH_NAMESPACE = 'dn42-autopeer';
