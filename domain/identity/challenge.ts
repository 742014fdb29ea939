import type { AsnEvent, ChallengeEvent, ChallengeIssued, VerificationMethod } from './events.js';

/**
 * A challenge's state. `Pending` is in flight until `expiresAt`; past it the
 * challenge is expired (a matter of time, not an event). `Succeeded`, `Failed`
 * and `Superseded` are terminal.
 */
export type ChallengeState =
  { status: 'Empty' } | ({ status: 'Pending'; attempts: number } & Issued) | ({ status: 'Succeeded' | 'Failed' | 'Superseded'; attempts: number } & Issued);

export interface Issued {
  challengeId: string;
  asn: number;
  optionId: string;
  mntner: string;
  method: VerificationMethod;
  anchor: string;
  nonce?: string;
  codeHash?: string;
  sentTo?: string;
  issuedAt: Date;
  expiresAt: Date;
}

export type TerminalStatus = 'Succeeded' | 'Failed' | 'Superseded';

export const initialChallenge = (): ChallengeState => ({ status: 'Empty' });

export function evolveChallenge(state: ChallengeState, event: ChallengeEvent): ChallengeState {
  switch (event.type) {
    case 'ChallengeIssued':
      return { status: 'Pending', attempts: 0, ...issued(event.data) };
    case 'ChallengeAnswerRejected':
      return state.status === 'Empty' ? state : { ...state, attempts: event.data.attempt };
    case 'ChallengeFailed':
      return state.status === 'Empty' ? state : { ...state, status: 'Failed' };
    case 'ChallengeSuperseded':
      return state.status === 'Empty' ? state : { ...state, status: 'Superseded' };
    case 'ChallengeSucceeded':
      return state.status === 'Empty' ? state : { ...state, status: 'Succeeded' };
    default: {
      const _never: never = event;
      return _never;
    }
  }
}

function issued(d: ChallengeIssued['data']): Issued {
  return {
    challengeId: d.challenge_id,
    asn: d.asn,
    optionId: d.option_id,
    mntner: d.mntner,
    method: d.method,
    anchor: d.anchor,
    nonce: d.nonce,
    codeHash: d.code_hash,
    sentTo: d.sent_to,
    issuedAt: new Date(d.issued_at),
    expiresAt: new Date(d.expires_at),
  };
}

/** In flight: pending and not yet expired at `now`. */
export function inFlight(state: ChallengeState, now: Date): state is Extract<ChallengeState, { status: 'Pending' }> {
  return state.status === 'Pending' && now < state.expiresAt;
}

/** One issue as the `asn-<asn>` stream records it. */
export interface AsnIssue {
  challengeId: string;
  optionId: string;
  issuedAt: Date;
  expiresAt: Date;
}

/** What the per-ASN rules read from `asn-<asn>`. */
export interface AsnState {
  /** The newest challenge of each option. */
  latest: Map<string, AsnIssue>;
  /** Every issue, oldest first (the hourly limit counts those inside its window; a re-send supersedes the option's older ones). */
  issued: AsnIssue[];
  /** sha256 of each pass → its expiry. */
  passes: Map<string, Date>;
}

export const initialAsn = (): AsnState => ({ latest: new Map(), issued: [], passes: new Map() });

export function evolveAsn(state: AsnState, event: AsnEvent): AsnState {
  switch (event.type) {
    case 'AsnChallengeIssued': {
      const latest = new Map(state.latest);
      const issue: AsnIssue = {
        challengeId: event.data.challenge_id,
        optionId: event.data.option_id,
        issuedAt: new Date(event.data.issued_at),
        expiresAt: new Date(event.data.expires_at),
      };
      latest.set(issue.optionId, issue);
      return { ...state, latest, issued: [...state.issued, issue] };
    }
    case 'CaptchaPassIssued': {
      const passes = new Map(state.passes);
      passes.set(event.data.pass_sha256, new Date(event.data.expires_at));
      return { ...state, passes };
    }
    default: {
      const _never: never = event;
      return _never;
    }
  }
}

export function passValid(state: AsnState, passSha256: string, now: Date): boolean {
  const expires = state.passes.get(passSha256);
  return expires !== undefined && now < expires;
}
