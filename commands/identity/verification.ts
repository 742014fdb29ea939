import { NotFound, TooManyRequests } from '../../domain/errors.js';
import { CAPTCHA_FAILURE_WINDOW_S, CAPTCHA_FAILURES_PER_IP } from '../../domain/identity/limits.js';
import { maskEmail } from '../../domain/identity/mask.js';
import { captchaRequired } from '../../domain/identity/policy.js';
import type { OptionView, OptionsView } from '../../domain/identity/views.js';
import type { VerificationOption } from '../../domain/registry/options.js';
import type { Queryable } from '../../infra/db/pool.js';
import type { IdentityCaptcha } from '../../infra/identity/captcha.js';
import { rateLimit, type RateLimit } from '../../infra/rate-limit.js';
import type { RegistryClient } from '../../infra/registry/client.js';

export type { OptionView, OptionsView };

/** What the replica answers for `/asns/{asn}/verification-options`. */
export interface ReplicaOptions {
  asn: number;
  as_name: string | null;
  mntners: string[];
  options: VerificationOption[];
}

/** The captcha was not solved or the pass is not valid for this ASN (options or challenge; the HTTP layer answers the fixed 400). */
export class CaptchaRefused extends Error {
  constructor() {
    super('captcha verification failed');
    this.name = 'CaptchaRefused';
  }
}

export const unknownAsn = (asn: number) => `AS${asn} not found in the registry`;
export const TOO_MANY_CAPTCHA_FAILURES = 'too many failed captchas; try again later';

/** The ASN's options from the registry replica: 404 for an unknown ASN, 503 when the replica does not answer. */
export async function replicaOptions(registry: RegistryClient, asn: number): Promise<ReplicaOptions> {
  const answer = (await registry.verificationOptions(asn)) as ReplicaOptions | null;
  if (!answer) throw new NotFound(unknownAsn(asn));
  return answer;
}

export function optionView(option: VerificationOption, captchaEnabled: boolean): OptionView {
  return {
    id: option.id,
    kind: option.kind,
    method: option.method,
    value: option.kind === 'email' ? maskEmail(option.value) : option.value,
    comment: option.comment,
    mntner: option.mntner,
    captcha_required: captchaRequired(option.kind, captchaEnabled),
  };
}

/** Failed captchas on verification-options, per client address (a pool of its own). */
export function captchaFailureLimit(db: Queryable): RateLimit {
  return rateLimit(db, { pool: 'identity-options-captcha-failures', limit: CAPTCHA_FAILURES_PER_IP, windowSeconds: CAPTCHA_FAILURE_WINDOW_S });
}

export interface OptionsDeps {
  registry: RegistryClient;
  captcha: IdentityCaptcha;
  captchaFailures: RateLimit;
}

/**
 * `verification-options`, in the contract's order: an address with 5 failed
 * captchas in 15 minutes is refused first (429); then the lookup (404 for an
 * unknown ASN, before any ticket is spent); then the captcha, mandatory unless
 * the kind is `none`; a refusal is counted against the address (CaptchaRefused).
 */
export async function listVerificationOptions(
  deps: OptionsDeps,
  input: { asn: number; ticket: string | undefined; remoteIp: string; now: Date },
): Promise<OptionsView> {
  const { asn, remoteIp, now } = input;
  if (deps.captcha.enabled && (await deps.captchaFailures.exceeded(remoteIp, now))) throw new TooManyRequests(TOO_MANY_CAPTCHA_FAILURES);
  const replica = await replicaOptions(deps.registry, asn);
  if (deps.captcha.enabled) {
    // Race: concurrent requests of one address would all pass the check above
    // before any failure is recorded. Each takes a place in the window before its
    // ticket is verified; only a failure keeps it.
    if (!(await deps.captchaFailures.reserve(remoteIp, now))) throw new TooManyRequests(TOO_MANY_CAPTCHA_FAILURES);
    const solved = await deps.captcha.verify(input.ticket ?? '', { remoteIp, now }).catch(async (err: unknown) => {
      await deps.captchaFailures.release(remoteIp, now);
      throw err;
    });
    if (solved) await deps.captchaFailures.release(remoteIp, now);
    else throw new CaptchaRefused();
  }
  const asName = replica.as_name ?? `AS${asn}`;
  return {
    asn,
    as_name: asName,
    display_name: replica.as_name ? `AS${asn} (${replica.as_name})` : `AS${asn}`,
    mntners: replica.mntners,
    options: replica.options.map((o) => optionView(o, deps.captcha.enabled)),
  };
}
