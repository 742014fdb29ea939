import { expect } from 'chai';
import type { Decider } from '../../../domain/decider.js';
import { fold } from '../../../domain/decider.js';
import { Gone, IllegalState, NotFound, TooManyRequests } from '../../../domain/errors.js';
import { evolveAsn, evolveChallenge, initialAsn, initialChallenge, passValid, type ChallengeState } from '../../../domain/identity/challenge.js';
import { decideAnswer, decideIssue, decideSupersede, type IssueChallenge, type RecordAnswer } from '../../../domain/identity/decide.js';
import type { AsnEvent, ChallengeEvent } from '../../../domain/identity/events.js';
import { maskEmail } from '../../../domain/identity/mask.js';
import { captchaRequired } from '../../../domain/identity/policy.js';
import { given } from '../../support/given.js';

const T0 = new Date('2026-11-01T12:00:00Z');
const at = (ms: number) => new Date(T0.getTime() + ms);
const SEC = 1000;
const MIN = 60 * SEC;

const issued = (id: string, ms = 0): ChallengeEvent => ({
  type: 'ChallengeIssued',
  data: {
    challenge_id: id,
    asn: 4242420001,
    option_id: 'ssh-1',
    mntner: 'ALPHA-MNT',
    method: 'ssh',
    anchor: 'ssh-ed25519 AAAA',
    nonce: `AS4242420001-${id}`,
    issued_at: at(ms).toISOString(),
    expires_at: at(ms + 15 * MIN).toISOString(),
  },
});
const rejected = (attempt: number, ms = 0): ChallengeEvent => ({
  type: 'ChallengeAnswerRejected',
  data: { attempt, reason: 'bad-signature', at: at(ms).toISOString() },
});
const answer = (ok: boolean, ms = 0): RecordAnswer => ({
  type: 'RecordAnswer',
  now: at(ms),
  verdict: ok ? { ok: true } : { ok: false, reason: 'bad-signature' },
});

/** The submit side as a decider, for given / when / then. */
const challengeDecider: Decider<RecordAnswer, ChallengeEvent, ChallengeState> = {
  initialState: initialChallenge,
  evolve: evolveChallenge,
  decide: (command, state) => decideAnswer(command, state).events,
};

describe('challenge decider: answers', () => {
  it('a correct answer to a challenge in flight succeeds', () => {
    given(challengeDecider, [issued('c1')])
      .when(answer(true, 5 * MIN))
      .then([{ type: 'ChallengeSucceeded', data: { at: at(5 * MIN).toISOString() } }]);
  });

  it('a wrong answer counts as an attempt', () => {
    given(challengeDecider, [issued('c1'), rejected(1)])
      .when(answer(false))
      .then([rejected(2)]);
  });

  it('the fifth wrong answer fails the challenge', () => {
    given(challengeDecider, [issued('c1'), rejected(1), rejected(2), rejected(3), rejected(4)])
      .when(answer(false))
      .then([rejected(5), { type: 'ChallengeFailed', data: { reason: 'attempts', at: T0.toISOString() } }]);
  });

  it('no challenge is 404, terminal ones are 409, one past 15 minutes is 410', () => {
    given(challengeDecider, []).when(answer(true)).thenThrows(NotFound, 'challenge not found');
    given(challengeDecider, [issued('c1'), { type: 'ChallengeSucceeded', data: { at: T0.toISOString() } }])
      .when(answer(true))
      .thenThrows(IllegalState, 'challenge already used');
    given(challengeDecider, [issued('c1'), { type: 'ChallengeSuperseded', data: { by: 'c2', at: T0.toISOString() } }])
      .when(answer(true))
      .thenThrows(IllegalState, /superseded/);
    given(challengeDecider, [issued('c1'), { type: 'ChallengeFailed', data: { reason: 'mail', at: T0.toISOString() } }])
      .when(answer(true))
      .thenThrows(IllegalState, /failed/);
    given(challengeDecider, [issued('c1')])
      .when(answer(true, 15 * MIN))
      .thenThrows(Gone, 'challenge expired');
    given(challengeDecider, [issued('c1')])
      .when(answer(true, 15 * MIN - 1))
      .then([{ type: 'ChallengeSucceeded', data: { at: at(15 * MIN - 1).toISOString() } }]);
  });
});

describe('challenge decider: issue', () => {
  const asnIssued = (id: string, ms: number): AsnEvent => ({
    type: 'AsnChallengeIssued',
    data: { challenge_id: id, option_id: 'ssh-1', issued_at: at(ms).toISOString(), expires_at: at(ms + 15 * MIN).toISOString() },
  });
  const command = (ms: number, id = 'new', pass?: string): IssueChallenge => ({
    type: 'IssueChallenge',
    now: at(ms),
    asn: 4242420001,
    option: { id: 'ssh-1', mntner: 'ALPHA-MNT', method: 'ssh', anchor: 'ssh-ed25519 AAAA' },
    fresh: { challengeId: id, nonce: `AS4242420001-${id}` },
    solvedPassSha256: pass,
  });
  const asn = (events: AsnEvent[]) => fold({ initialState: initialAsn, evolve: evolveAsn }, events);
  const challenge = (events: ChallengeEvent[]) => fold({ initialState: initialChallenge, evolve: evolveChallenge }, events);

  it('issues the first challenge of an option', () => {
    const decision = decideIssue(command(0), asn([]), undefined);
    expect(decision.outcome).to.equal('issued');
    if (decision.outcome !== 'issued') return;
    expect(decision.challengeEvents).to.deep.equal([{ ...issued('new'), data: { ...issued('new').data, challenge_id: 'new' } }]);
    expect(decision.asnEvents).to.deep.equal([asnIssued('new', 0)]);
    expect(decision.replaces).to.deep.equal([]);
  });

  it('within 60 s returns the challenge in flight and records only a new pass', () => {
    const decision = decideIssue(command(59 * SEC, 'new', 'sha'), asn([asnIssued('c1', 0)]), challenge([issued('c1')]));
    expect(decision.outcome).to.equal('reused');
    if (decision.outcome !== 'reused') return;
    expect(decision.challenge.challengeId).to.equal('c1');
    expect(decision.asnEvents).to.deep.equal([
      { type: 'CaptchaPassIssued', data: { pass_sha256: 'sha', expires_at: at(59 * SEC + 30 * MIN).toISOString(), at: at(59 * SEC).toISOString() } },
    ]);
  });

  it("after 60 s issues a new challenge that replaces the option's challenges not yet expired", () => {
    const otherOption: AsnEvent = {
      type: 'AsnChallengeIssued',
      data: { challenge_id: 'other', option_id: 'email-1', issued_at: T0.toISOString(), expires_at: at(15 * MIN).toISOString() },
    };
    const history = [asnIssued('c0', -20 * MIN), asnIssued('c1', 0), otherOption];
    const decision = decideIssue(command(60 * SEC), asn(history), challenge([issued('c1')]));
    expect(decision.outcome).to.equal('issued');
    if (decision.outcome !== 'issued') return;
    expect(decision.replaces).to.deep.equal(['c1']);
  });

  it('within 60 s of a challenge that already ended issues a new one (the ended one is left alone when superseding)', () => {
    const ended = challenge([issued('c1'), { type: 'ChallengeSucceeded', data: { at: T0.toISOString() } }]);
    const decision = decideIssue(command(10 * SEC), asn([asnIssued('c1', 0)]), ended);
    expect(decision.outcome).to.equal('issued');
    expect(decideSupersede(ended, 'new', at(10 * SEC))).to.deep.equal([]);
  });

  it('supersedes an older challenge only while it is in flight', () => {
    expect(decideSupersede(challenge([issued('c1')]), 'new', at(60 * SEC))).to.deep.equal([
      { type: 'ChallengeSuperseded', data: { by: 'new', at: at(60 * SEC).toISOString() } },
    ]);
    expect(decideSupersede(challenge([issued('c1')]), 'new', at(15 * MIN))).to.deep.equal([]);
    expect(
      decideSupersede(challenge([issued('c1'), { type: 'ChallengeFailed', data: { reason: 'mail', at: T0.toISOString() } }]), 'new', at(MIN)),
    ).to.deep.equal([]);
  });

  it('refuses the 11th challenge of an ASN inside an hour, and allows it once the first left the hour', () => {
    const history = Array.from({ length: 10 }, (_, i) => asnIssued(`c${i}`, i * MIN));
    expect(() => decideIssue(command(60 * MIN - 1), asn(history), undefined)).to.throw(
      TooManyRequests,
      'too many challenges for AS4242420001; try again later',
    );
    expect(decideIssue(command(60 * MIN), asn(history), undefined).outcome).to.equal('issued');
  });

  it('a pass is valid for 30 minutes', () => {
    const state = asn([{ type: 'CaptchaPassIssued', data: { pass_sha256: 'p', expires_at: at(30 * MIN).toISOString(), at: T0.toISOString() } }]);
    expect(passValid(state, 'p', at(30 * MIN - 1))).to.equal(true);
    expect(passValid(state, 'p', at(30 * MIN))).to.equal(false);
    expect(passValid(state, 'q', T0)).to.equal(false);
  });
});

describe('verification option policy and masking', () => {
  it('requires a captcha for e-mail only, and for nothing when the captcha is off', () => {
    expect(['email', 'ssh', 'pgp'].map((m) => captchaRequired(m as 'email', true))).to.deep.equal([true, false, false]);
    expect(captchaRequired('email', false)).to.equal(false);
  });

  it('masks addresses to the first characters, *** and the domain', () => {
    expect(maskEmail('alice@alpha.example')).to.equal('al***@alpha.example');
    expect(maskEmail('noc@alpha.example')).to.equal('n***@alpha.example');
    expect(maskEmail('ab@x.example')).to.equal('a***@x.example');
    expect(maskEmail('a@x.example')).to.equal('***@x.example');
    expect(maskEmail(' padded@x.example  ')).to.equal('pa***@x.example');
  });
});
