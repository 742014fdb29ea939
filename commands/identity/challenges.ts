import { createHmac, hkdfSync, randomBytes, randomInt, randomUUID, timingSafeEqual } from 'node:crypto';
import { fold, type DomainEvent } from '../../domain/decider.js';
import { NotFound, Unavailable } from '../../domain/errors.js';
import { sha256Hex } from '../../domain/sha256.js';
import type { ChallengeView } from '../../domain/identity/views.js';
import { evolveAsn, evolveChallenge, initialAsn, initialChallenge, passValid, type AsnState, type ChallengeState } from '../../domain/identity/challenge.js';
import {
  checkHourlyLimit,
  decideAnswer,
  decideIssue,
  decideMailFailure,
  decideSupersede,
  reusable,
  submittable,
  CHALLENGE_NOT_FOUND,
  type AnswerVerdict,
  type IssueDecision,
} from '../../domain/identity/decide.js';
import { asnStreamId, challengeStreamId, type AsnEvent, type ChallengeEvent } from '../../domain/identity/events.js';
import { CAPTCHA_PASS_LIFETIME_MS, RESEND_COOLDOWN_MS, SSH_NAMESPACE } from '../../domain/identity/limits.js';
import { maskEmail } from '../../domain/identity/mask.js';
import { captchaRequired } from '../../domain/identity/policy.js';
import { verifySshSignature } from '../../domain/identity/sshsig.js';
import type { Config } from '../../infra/config.js';
import type { EventMetadata, EventStore } from '../../infra/eventstore/types.js';
import type { IdentityCaptcha } from '../../infra/identity/captcha.js';
import { keySecret } from '../../infra/identity/keys.js';
import { verifyPgpAnswer } from '../../infra/identity/pgp.js';
import type { Logger } from '../../infra/logger.js';
import type { MailSender } from '../../infra/mail.js';
import type { RegistryClient } from '../../infra/registry/client.js';
import { execute, load, type LoadedStream, type LoadMore } from '../handle.js';
import { CaptchaRefused, replicaOptions } from './verification.js';

export type { ChallengeView };

export interface ChallengeDeps {
  config: Config;
  log: Logger;
  store: EventStore;
  registry: RegistryClient;
  captcha: IdentityCaptcha;
  /** Undefined when no mail sender is configured: e-mail options then answer 503. */
  mail: MailSender | undefined;
}

export const OPTION_NOT_FOUND = 'verification option not found';
export const NO_MAIL_SENDER = 'e-mail verification is unavailable: no mail sender configured';
export const MAIL_FAILED = 'the verification e-mail could not be sent; try again later';

/** The contract's Challenge fields of a captcha pass, present right after a solve. */
export type PassFields = Pick<ChallengeView, 'captcha_pass' | 'captcha_pass_expires_in'>;

/**
 * The code could not be mailed (503). A pass made from a ticket solved with the
 * same request is stored anyway and travels with the error, so a retry needs no
 * new captcha.
 */
export class MailNotSent extends Unavailable {
  constructor(readonly pass: PassFields) {
    super(MAIL_FAILED);
    this.name = 'MailNotSent';
  }
}

const asnState = (stream: LoadedStream): AsnState => fold({ initialState: initialAsn, evolve: evolveAsn }, stream.events as AsnEvent[]);
const challengeState = (stream: LoadedStream): ChallengeState =>
  fold({ initialState: initialChallenge, evolve: evolveChallenge }, stream.events as ChallengeEvent[]);

/**
 * The stored form of an e-mail code: HMAC-SHA256 under a key derived from
 * `IDENTITY_KEY_SECRET`, over the challenge id and the code. Equal codes never
 * hash alike, and someone who reads the event store without the secret cannot
 * try the million codes offline.
 */
export const codeHash = (config: Config, challengeId: string, code: string): string =>
  createHmac('sha256', codeKey(config)).update(`${challengeId}\0${code}`).digest('hex');

const codeKeys = new WeakMap<Config, Buffer>();
function codeKey(config: Config): Buffer {
  let key = codeKeys.get(config);
  if (!key) {
    key = Buffer.from(hkdfSync('sha256', keySecret(config), 'dn42-control identity', 'e-mail challenge codes v1', 32));
    codeKeys.set(config, key);
  }
  return key;
}

/**
 * `POST /challenge`: re-resolves the option from the registry (never from the
 * client), refuses e-mail without a mail sender before any ticket is spent,
 * checks the captcha when the option requires one (a valid pass of this ASN, else
 * a one-time ticket; a request past the hourly limit that would not be a reuse
 * is refused first, so it spends no ticket), then decides on the `asn-<asn>`
 * stream: reuse within the cooldown, or a new challenge that replaces the
 * option's older ones still in flight. An ssh or pgp challenge supersedes them in the same append. An e-mail
 * challenge is appended first and supersedes them only once the mail server
 * accepted the code: when it refuses, the new challenge fails (503) and the older
 * code stays valid. Race: if the process stops between the append and the
 * supersession, two codes of the option are valid until they expire (15 min) or
 * the next successful re-send supersedes both.
 */
export async function issueChallenge(
  deps: ChallengeDeps,
  input: { asn: number; optionId: string; captchaToken?: string; captchaPass?: string; remoteIp: string; now: Date },
  metadata: EventMetadata,
): Promise<ChallengeView> {
  const { asn, now } = input;
  const option = (await replicaOptions(deps.registry, asn)).options.find((o) => o.id === input.optionId);
  if (!option) throw new NotFound(OPTION_NOT_FOUND);
  if (option.kind === 'email' && !deps.mail) throw new Unavailable(NO_MAIL_SENDER);

  let pass: string | undefined;
  if (captchaRequired(option.kind, deps.captcha.enabled)) {
    const state = asnState(await load(deps.store, asnStreamId(asn)));
    const latest = await latestOf(state, option.id, (streamId) => load(deps.store, streamId));
    // A request that would issue (not reuse) past the hourly limit is refused before a ticket is spent.
    // The decision checks again: a concurrent issue may still take the last place after this, spending the ticket.
    if (!reusable(latest, now)) checkHourlyLimit(state, asn, now);
    const viaPass = input.captchaPass !== undefined && passValid(state, sha256Hex(input.captchaPass), now);
    if (!viaPass) {
      if (!(await deps.captcha.verify(input.captchaToken ?? '', { remoteIp: input.remoteIp, now }))) throw new CaptchaRefused();
      pass = randomBytes(32).toString('base64url');
    }
  }

  const challengeId = randomUUID();
  const code = option.kind === 'email' ? String(randomInt(0, 1_000_000)).padStart(6, '0') : undefined;
  const command = {
    type: 'IssueChallenge' as const,
    now,
    asn,
    option: {
      id: option.id,
      mntner: option.mntner,
      method: option.kind,
      anchor: option.kind === 'email' ? maskEmail(option.value) : option.value,
      sentTo: option.kind === 'email' ? maskEmail(option.value) : undefined,
    },
    fresh: {
      challengeId,
      nonce: code === undefined ? `AS${asn}-${randomBytes(16).toString('hex')}` : undefined,
      codeHash: code === undefined ? undefined : codeHash(deps.config, challengeId, code),
    },
    solvedPassSha256: pass === undefined ? undefined : sha256Hex(pass),
  };
  const asnStream = asnStreamId(asn);
  const { result: decision } = await execute<IssueDecision>(
    deps.store,
    [asnStream],
    async (streams, more) => {
      const state = asnState(streams[asnStream]);
      const decision = decideIssue(command, state, await latestOf(state, option.id, more));
      if (decision.outcome === 'reused') return { writes: [{ streamId: asnStream, events: decision.asnEvents }], result: decision };
      await more(challengeStreamId(challengeId), 'version');
      return {
        writes: [
          { streamId: asnStream, events: decision.asnEvents },
          { streamId: challengeStreamId(challengeId), events: decision.challengeEvents },
          ...(code === undefined ? await supersessions(more, decision.replaces, challengeId, now) : []),
        ],
        result: decision,
      };
    },
    metadata,
  );

  const passFields: PassFields = pass === undefined ? {} : { captcha_pass: pass, captcha_pass_expires_in: CAPTCHA_PASS_LIFETIME_MS / 1000 };
  if (decision.outcome === 'reused') return { ...challengeView(decision.challenge, now, true), ...passFields };

  const issued = fold({ initialState: initialChallenge, evolve: evolveChallenge }, decision.challengeEvents);
  if (issued.status === 'Empty') throw new Error(`challenge ${challengeId}: the decision issued nothing`);
  if (code !== undefined) {
    await mailCode(deps, { challengeId, asn, mntner: option.mntner, to: option.value, code, now, pass: passFields }, metadata);
    await supersede(deps.store, decision.replaces, challengeId, now, metadata).catch((err: unknown) => {
      // The code is out, so the answer is still 201; the older codes stay valid until they expire or the next re-send supersedes them.
      deps.log.warn({ err, challengeId, requestId: metadata.requestId }, 'older challenges not superseded after the mail was sent');
    });
  }
  return { ...challengeView(issued, now, false), ...passFields };
}

/** The state of the option's newest challenge, when it has one. */
async function latestOf(state: AsnState, optionId: string, read: (streamId: string) => Promise<LoadedStream>): Promise<ChallengeState | undefined> {
  const id = state.latest.get(optionId)?.challengeId;
  return id === undefined ? undefined : challengeState(await read(challengeStreamId(id)));
}

/** `ChallengeSuperseded` for each of the older challenges still in flight. */
async function supersessions(more: LoadMore, older: readonly string[], by: string, now: Date) {
  const writes = [];
  for (const id of older) {
    const streamId = challengeStreamId(id);
    writes.push({ streamId, events: decideSupersede(challengeState(await more(streamId)), by, now) });
  }
  return writes;
}

/** After the mail went out: the new code is the only valid one of the option. */
async function supersede(store: EventStore, older: readonly string[], by: string, now: Date, metadata: EventMetadata): Promise<void> {
  if (older.length === 0) return;
  await execute(
    store,
    older.map(challengeStreamId),
    async (_streams, more) => ({ writes: await supersessions(more, older, by, now), result: undefined }),
    metadata,
  );
}

async function mailCode(
  deps: ChallengeDeps,
  m: { challengeId: string; asn: number; mntner: string; to: string; code: string; now: Date; pass: PassFields },
  metadata: EventMetadata,
): Promise<void> {
  try {
    await deps.mail!.send({
      to: m.to.trim(),
      subject: `dn42 verification code for AS${m.asn}`,
      text: [
        `Your verification code for AS${m.asn} (${m.mntner}) is:`,
        '',
        `    ${m.code}`,
        '',
        'It is valid for 15 minutes. If you did not ask for it, ignore this message.',
        '',
      ].join('\n'),
    });
  } catch (err) {
    deps.log.warn({ err, challengeId: m.challengeId, requestId: metadata.requestId }, 'verification mail not sent');
    const streamId = challengeStreamId(m.challengeId);
    await execute(
      deps.store,
      [streamId],
      (s) => ({ writes: [{ streamId, events: decideMailFailure(challengeState(s[streamId]), m.now) }], result: undefined }),
      metadata,
    );
    throw new MailNotSent(m.pass);
  }
}

function challengeView(c: Exclude<ChallengeState, { status: 'Empty' }>, now: Date, reused: boolean): ChallengeView {
  const resendAt = c.issuedAt.getTime() + RESEND_COOLDOWN_MS;
  return {
    challenge_id: c.challengeId,
    method: c.method,
    ...(c.nonce !== undefined ? { nonce: c.nonce } : {}),
    instructions: instructions(c),
    ...(c.sentTo !== undefined ? { sent_to: c.sentTo } : {}),
    expires_at: c.expiresAt.toISOString(),
    reused,
    resend_available_in: Math.max(0, Math.ceil((resendAt - now.getTime()) / 1000)),
  };
}

function instructions(c: Exclude<ChallengeState, { status: 'Empty' }>): string {
  switch (c.method) {
    case 'email':
      return `Enter the 6-digit code sent to ${c.sentTo}. It is valid for 15 minutes.`;
    case 'ssh':
      return `Sign the nonce with the SSH key registered on ${c.mntner} and paste the armored signature: echo -n '${c.nonce}' | ssh-keygen -Y sign -n ${SSH_NAMESPACE} -f <private key>`;
    case 'pgp':
      return `Clearsign the nonce with the PGP key ${c.anchor} registered on ${c.mntner} and paste the signed message: echo -n '${c.nonce}' | gpg --clearsign --local-user ${c.anchor}`;
    default: {
      const _never: never = c.method;
      return _never;
    }
  }
}

/** How an answer was judged: counted as wrong, or refused without counting (pgp key missing, pgp machinery down). */
export type Judgement = { verdict: AnswerVerdict; detail?: string } | { refused: { status: 422 | 503; detail: string } };

export const WRONG_ANSWER = 'wrong answer';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Loads a challenge for submit: 404 unknown, 409 terminal, 410 expired. */
export async function submittableChallenge(store: EventStore, challengeId: string, now: Date) {
  if (!UUID.test(challengeId)) throw new NotFound(CHALLENGE_NOT_FOUND);
  return submittable(challengeState(await load(store, challengeStreamId(challengeId))), now);
}

/** Checks an answer against the challenge: the code in constant time, SSHSIG and PGP through their verifiers. */
export async function judgeAnswer(
  deps: Pick<ChallengeDeps, 'config' | 'log'>,
  c: Extract<ChallengeState, { status: 'Pending' }>,
  answer: { text: string; publicKey?: string },
): Promise<Judgement> {
  switch (c.method) {
    case 'email': {
      const given = /^\d{6}$/.test(answer.text.trim()) ? codeHash(deps.config, c.challengeId, answer.text.trim()) : '';
      const ok = given.length === c.codeHash!.length && timingSafeEqual(Buffer.from(given, 'hex'), Buffer.from(c.codeHash!, 'hex'));
      return ok ? { verdict: { ok: true } } : { verdict: { ok: false, reason: 'wrong code' }, detail: WRONG_ANSWER };
    }
    case 'ssh': {
      const verdict = verifySshSignature({ armored: answer.text, message: c.nonce!, namespace: SSH_NAMESPACE, registeredKeys: [c.anchor] });
      return verdict.ok ? { verdict: { ok: true } } : { verdict: { ok: false, reason: verdict.reason }, detail: `${WRONG_ANSWER}: ${verdict.detail}` };
    }
    case 'pgp': {
      const verdict = await verifyPgpAnswer(
        { config: deps.config, log: deps.log },
        { clearsigned: answer.text, nonce: c.nonce!, fingerprint: c.anchor, publicKey: answer.publicKey },
      );
      if (verdict.ok) return { verdict: { ok: true } };
      if (verdict.status === 400) return { verdict: { ok: false, reason: 'pgp' }, detail: `${WRONG_ANSWER}: ${verdict.detail}` };
      return { refused: { status: verdict.status, detail: verdict.detail } };
    }
    default: {
      const _never: never = c.method;
      return _never;
    }
  }
}

/**
 * Records a judged answer on the challenge's stream. Two correct answers racing
 * append at the same version: one succeeds, the other is decided again and finds
 * the challenge used (409). `onSuccess` (the session record) is appended in the
 * same append as `ChallengeSucceeded`, so a challenge is never used up without
 * its session, nor a session recorded for a challenge another answer took.
 */
export async function recordAnswer(
  store: EventStore,
  challengeId: string,
  verdict: AnswerVerdict,
  now: Date,
  metadata: EventMetadata,
  onSuccess?: { streamId: string; events: readonly DomainEvent[] },
) {
  const streamId = challengeStreamId(challengeId);
  const { result } = await execute(
    store,
    onSuccess ? [streamId, onSuccess.streamId] : [streamId],
    (streams) => {
      const state = challengeState(streams[streamId]);
      const decision = decideAnswer({ type: 'RecordAnswer', now, verdict }, state);
      const session = decision.outcome === 'succeeded' && onSuccess ? [onSuccess] : [];
      return { writes: [{ streamId, events: decision.events }, ...session], result: { ...decision, challenge: submittable(state, now) } };
    },
    metadata,
  );
  return result;
}
