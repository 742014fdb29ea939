import { Gone, IllegalState, NotFound, TooManyRequests } from '../errors.js';
import { inFlight, type AsnState, type ChallengeState } from './challenge.js';
import type { AsnEvent, ChallengeEvent, VerificationMethod } from './events.js';
import {
  CAPTCHA_PASS_LIFETIME_MS,
  CHALLENGE_LIFETIME_MS,
  CHALLENGE_RATE_WINDOW_MS,
  CHALLENGES_PER_ASN_PER_HOUR,
  MAX_SUBMIT_ATTEMPTS,
  RESEND_COOLDOWN_MS,
} from './limits.js';

export const CHALLENGE_NOT_FOUND = 'challenge not found';
export const CHALLENGE_EXPIRED = 'challenge expired';
export const TOO_MANY_ATTEMPTS = 'too many wrong answers; request a new challenge';
export const TERMINAL_DETAIL: Record<'Succeeded' | 'Failed' | 'Superseded', string> = {
  Succeeded: 'challenge already used',
  Failed: 'challenge failed; request a new one',
  Superseded: 'challenge superseded by a newer one',
};
export const tooManyChallenges = (asn: number) => `too many challenges for AS${asn}; try again later`;

/**
 * Issue a challenge for one option. Randomness (ids, nonce, code hash, pass) is
 * made by the caller and arrives in the command, so `decideIssue` stays pure.
 */
export interface IssueChallenge {
  type: 'IssueChallenge';
  now: Date;
  asn: number;
  option: { id: string; mntner: string; method: VerificationMethod; anchor: string; sentTo?: string };
  fresh: { challengeId: string; nonce?: string; codeHash?: string };
  /** Set when a captcha ticket was solved with this request: a pass for later re-sends. */
  solvedPassSha256?: string;
}

export type IssueDecision =
  | { outcome: 'reused'; challenge: Extract<ChallengeState, { status: 'Pending' }>; asnEvents: AsnEvent[] }
  | {
      outcome: 'issued';
      asnEvents: AsnEvent[];
      challengeEvents: ChallengeEvent[];
      /**
       * The option's older challenges that may still be in flight: the new one
       * replaces them (`decideSupersede`) once it is out, i.e. for e-mail only
       * after the mail was accepted.
       */
      replaces: string[];
    };

/**
 * The per-ASN rules, in order: the option's newest challenge still in flight and
 * younger than the cooldown is returned again (no new challenge, no mail); past
 * the cooldown a new one is issued that replaces the option's older ones still in
 * flight; every new one counts against the hourly limit. `latest` is the state of
 * the option's newest challenge, when it has one.
 */
export function decideIssue(command: IssueChallenge, asn: AsnState, latest: ChallengeState | undefined): IssueDecision {
  const { now } = command;
  const at = now.toISOString();
  const passEvents: AsnEvent[] = command.solvedPassSha256
    ? [
        {
          type: 'CaptchaPassIssued',
          data: { pass_sha256: command.solvedPassSha256, expires_at: new Date(now.getTime() + CAPTCHA_PASS_LIFETIME_MS).toISOString(), at },
        },
      ]
    : [];
  const live = reusable(latest, now);
  if (live) return { outcome: 'reused', challenge: live, asnEvents: passEvents };
  checkHourlyLimit(asn, command.asn, now);

  const { challengeId, nonce, codeHash } = command.fresh;
  const expiresAt = new Date(now.getTime() + CHALLENGE_LIFETIME_MS).toISOString();
  const { option } = command;
  return {
    outcome: 'issued',
    asnEvents: [{ type: 'AsnChallengeIssued', data: { challenge_id: challengeId, option_id: option.id, issued_at: at, expires_at: expiresAt } }, ...passEvents],
    challengeEvents: [
      {
        type: 'ChallengeIssued',
        data: {
          challenge_id: challengeId,
          asn: command.asn,
          option_id: option.id,
          mntner: option.mntner,
          method: option.method,
          anchor: option.anchor,
          ...(nonce !== undefined ? { nonce } : {}),
          ...(codeHash !== undefined ? { code_hash: codeHash } : {}),
          ...(option.sentTo !== undefined ? { sent_to: option.sentTo } : {}),
          issued_at: at,
          expires_at: expiresAt,
        },
      },
    ],
    replaces: asn.issued.filter((i) => i.optionId === option.id && now < i.expiresAt).map((i) => i.challengeId),
  };
}

/** The option's newest challenge when it is in flight and younger than the cooldown: a request gets it again. */
export function reusable(latest: ChallengeState | undefined, now: Date): Extract<ChallengeState, { status: 'Pending' }> | undefined {
  return latest && inFlight(latest, now) && now.getTime() - latest.issuedAt.getTime() < RESEND_COOLDOWN_MS ? latest : undefined;
}

/** 429 when the ASN had 10 challenges issued in the sliding hour before `now`. */
export function checkHourlyLimit(asn: AsnState, asnNumber: number, now: Date): void {
  const windowStart = now.getTime() - CHALLENGE_RATE_WINDOW_MS;
  if (asn.issued.filter((i) => i.issuedAt.getTime() > windowStart).length >= CHALLENGES_PER_ASN_PER_HOUR)
    throw new TooManyRequests(tooManyChallenges(asnNumber));
}

/** A newer challenge of the option is out: an older one still in flight is superseded (one that ended or expired is left alone). */
export function decideSupersede(older: ChallengeState, by: string, now: Date): ChallengeEvent[] {
  return inFlight(older, now) ? [{ type: 'ChallengeSuperseded', data: { by, at: now.toISOString() } }] : [];
}

/** 404 for no challenge, 409 for a terminal one, 410 past its lifetime; else the challenge in flight. */
export function submittable(state: ChallengeState, now: Date): Extract<ChallengeState, { status: 'Pending' }> {
  if (state.status === 'Empty') throw new NotFound(CHALLENGE_NOT_FOUND);
  if (state.status !== 'Pending') throw new IllegalState(TERMINAL_DETAIL[state.status]);
  if (!inFlight(state, now)) throw new Gone(CHALLENGE_EXPIRED);
  return state;
}

/** The verdict on an answer, made by the caller (signature checks are I/O or slow). */
export type AnswerVerdict = { ok: true } | { ok: false; reason: string };

export interface RecordAnswer {
  type: 'RecordAnswer';
  now: Date;
  verdict: AnswerVerdict;
}

export type SubmitDecision = { outcome: 'succeeded' | 'wrong' | 'failed'; events: ChallengeEvent[]; attempts: number };

/** A correct answer ends the challenge; a wrong one counts, and the 5th fails it. */
export function decideAnswer(command: RecordAnswer, state: ChallengeState): SubmitDecision {
  const challenge = submittable(state, command.now);
  const at = command.now.toISOString();
  if (command.verdict.ok) return { outcome: 'succeeded', events: [{ type: 'ChallengeSucceeded', data: { at } }], attempts: challenge.attempts };
  const attempt = challenge.attempts + 1;
  const rejected: ChallengeEvent = { type: 'ChallengeAnswerRejected', data: { attempt, reason: command.verdict.reason, at } };
  if (attempt < MAX_SUBMIT_ATTEMPTS) return { outcome: 'wrong', events: [rejected], attempts: attempt };
  return { outcome: 'failed', events: [rejected, { type: 'ChallengeFailed', data: { reason: 'attempts', at } }], attempts: attempt };
}

/** The code could not be mailed: the challenge ends, so the cooldown does not hand it out again. */
export function decideMailFailure(state: ChallengeState, now: Date): ChallengeEvent[] {
  return state.status === 'Pending' ? [{ type: 'ChallengeFailed', data: { reason: 'mail', at: now.toISOString() } }] : [];
}
