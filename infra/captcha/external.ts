import type { SpentTickets } from './spent.js';
import type { CaptchaVerifier, VerifyContext } from './types.js';

export interface ExternalOptions {
  /** The provider's siteverify URL (Turnstile-style: form POST, JSON `{success, action, ...}`). */
  verifyUrl: string;
  secret: string;
  /** When set, the provider must report this action for the ticket. */
  expectedAction?: string;
  spent: SpentTickets;
  /** How long a ticket is remembered as spent (the provider's own validity is shorter). */
  rememberMs?: number;
  fetch?: typeof fetch;
  timeoutMs?: number;
}

interface SiteverifyResponse {
  success?: boolean;
  action?: string;
}

/**
 * A hosted captcha verified server-side through its siteverify endpoint. The
 * provider refuses replays itself; the ticket is also spent here so a second
 * instance never accepts it, even if the provider were to answer twice.
 */
export function externalCaptcha(options: ExternalOptions): CaptchaVerifier {
  const doFetch = options.fetch ?? fetch;
  return {
    kind: 'external',
    async verify(ticket: string, context: VerifyContext): Promise<boolean> {
      if (!ticket) return false;
      const form = new URLSearchParams({ secret: options.secret, response: ticket });
      if (context.remoteIp) form.set('remoteip', context.remoteIp);
      let answer: SiteverifyResponse;
      try {
        const res = await doFetch(options.verifyUrl, { method: 'POST', body: form, signal: AbortSignal.timeout(options.timeoutMs ?? 10_000) });
        if (!res.ok) return false;
        answer = (await res.json()) as SiteverifyResponse;
      } catch {
        return false;
      }
      if (answer.success !== true) return false;
      if (options.expectedAction !== undefined && answer.action !== options.expectedAction) return false;
      return options.spent.spend(ticket, new Date(context.now.getTime() + (options.rememberMs ?? 24 * 3_600_000)));
    },
  };
}
