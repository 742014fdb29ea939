import type { DomainEvent } from '../decider.js';

/**
 * ASN verification as two kinds of streams:
 * - `challenge-<id>`: one challenge, from issue to its terminal state;
 * - `asn-<asn>`: what the per-ASN rules need to see together: which challenge is the
 *   newest of each option (cooldown, supersession), how many were issued in the last
 *   hour (10 per hour), and the captcha passes bound to the ASN.
 * An issue appends to both in one append, so two instances issuing at once are
 * ordered by the `asn-<asn>` stream version. No event holds an e-mail code or a
 * captcha pass in plaintext: only a keyed hash of the code and the sha256 of the pass.
 */
export type VerificationMethod = 'email' | 'pgp' | 'ssh';

export type ChallengeIssued = DomainEvent<
  'ChallengeIssued',
  {
    challenge_id: string;
    asn: number;
    option_id: string;
    mntner: string;
    method: VerificationMethod;
    /** ssh: the registered key (`<type> <base64>`); pgp: the registered fingerprint; email: the masked address. */
    anchor: string;
    /** ssh and pgp: the text to sign. */
    nonce?: string;
    /** email: HMAC-SHA256 of the code, keyed with the challenge id (hex). */
    code_hash?: string;
    /** email: the masked address the code went to. */
    sent_to?: string;
    issued_at: string;
    expires_at: string;
  }
>;
/** A wrong answer; `attempt` counts from 1. */
export type ChallengeAnswerRejected = DomainEvent<'ChallengeAnswerRejected', { attempt: number; reason: string; at: string }>;
/** Terminal: the attempt limit was reached, or the code could not be mailed. */
export type ChallengeFailed = DomainEvent<'ChallengeFailed', { reason: 'attempts' | 'mail'; at: string }>;
/** Terminal: a re-send after the cooldown replaced this challenge. */
export type ChallengeSuperseded = DomainEvent<'ChallengeSuperseded', { by: string; at: string }>;
/** Terminal: the answer verified; a session grant follows. */
export type ChallengeSucceeded = DomainEvent<'ChallengeSucceeded', { at: string }>;

export type ChallengeEvent = ChallengeIssued | ChallengeAnswerRejected | ChallengeFailed | ChallengeSuperseded | ChallengeSucceeded;

/** The per-ASN summary of an issue (the full record is on the challenge's stream). */
export type AsnChallengeIssued = DomainEvent<'AsnChallengeIssued', { challenge_id: string; option_id: string; issued_at: string; expires_at: string }>;
/** A captcha was solved for this ASN: re-sends may show the pass instead of a new ticket. */
export type CaptchaPassIssued = DomainEvent<'CaptchaPassIssued', { pass_sha256: string; expires_at: string; at: string }>;

export type AsnEvent = AsnChallengeIssued | CaptchaPassIssued;

export const challengeStreamId = (challengeId: string): string => `challenge-${challengeId}`;
export const asnStreamId = (asn: number): string => `asn-${asn}`;
