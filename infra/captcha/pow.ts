import { createChallenge, randomInt, verifySolution, type Challenge, type Solution } from 'altcha-lib';
import { deriveKey } from 'altcha-lib/algorithms/sha';
import type { SpentTickets } from './spent.js';
import type { CaptchaVerifier, ChallengeIssuer, VerifyContext } from './types.js';

export interface PowOptions {
  /** HMAC key that signs challenges; every instance must share it. */
  secret: string;
  spent: SpentTickets;
  /** Upper bound of the hidden counter: the work is about half of it in hashes. */
  maxNumber?: number;
  /** How long a challenge may be answered. */
  ttlMs?: number;
}

export const POW_ALGORITHM = 'SHA-256';
export const POW_DEFAULT_MAX_NUMBER = 100_000;
export const POW_DEFAULT_TTL_MS = 10 * 60_000;

/**
 * ALTCHA proof of work. A challenge is signed with the shared secret and names
 * its expiry in its signed data, checked against the caller's clock (the
 * library's own expiry would read the system clock). The ticket is the widget's
 * payload: base64 of JSON `{challenge, solution}`. The challenge signature is
 * what gets spent, so a solved challenge opens one door once.
 */
export function powCaptcha(options: PowOptions): CaptchaVerifier & ChallengeIssuer<Challenge> {
  const maxNumber = options.maxNumber ?? POW_DEFAULT_MAX_NUMBER;
  const ttlMs = options.ttlMs ?? POW_DEFAULT_TTL_MS;
  return {
    kind: 'pow',
    async issueChallenge(now: Date): Promise<Challenge> {
      return createChallenge({
        algorithm: POW_ALGORITHM,
        cost: 1,
        counter: randomInt(maxNumber),
        deriveKey,
        data: { expires_at: new Date(now.getTime() + ttlMs).toISOString() },
        hmacSignatureSecret: options.secret,
      });
    },
    async verify(ticket: string, context: VerifyContext): Promise<boolean> {
      const payload = decodeTicket(ticket);
      if (!payload?.challenge.signature) return false;
      const { parameters } = payload.challenge;
      if (parameters.algorithm !== POW_ALGORITHM) return false;
      const expiresAt = Date.parse(String(parameters.data?.expires_at ?? ''));
      if (!Number.isFinite(expiresAt) || expiresAt <= context.now.getTime()) return false;
      const result = await verifySolution({ challenge: payload.challenge, solution: payload.solution, deriveKey, hmacSignatureSecret: options.secret }).catch(
        () => undefined,
      );
      if (!result?.verified) return false;
      return options.spent.spend(payload.challenge.signature, new Date(expiresAt));
    },
  };
}

/** Encodes a solved challenge the way the widget submits it. */
export function encodeTicket(challenge: Challenge, solution: Solution): string {
  return Buffer.from(JSON.stringify({ challenge: { parameters: challenge.parameters, signature: challenge.signature }, solution })).toString('base64');
}

function decodeTicket(ticket: string): { challenge: Challenge; solution: Solution } | undefined {
  try {
    const payload = JSON.parse(Buffer.from(ticket, 'base64').toString('utf8')) as { challenge?: Challenge; solution?: Solution };
    if (typeof payload?.challenge?.parameters !== 'object' || payload.challenge.parameters === null) return undefined;
    if (typeof payload.solution !== 'object' || payload.solution === null) return undefined;
    return { challenge: payload.challenge, solution: payload.solution };
  } catch {
    return undefined;
  }
}
