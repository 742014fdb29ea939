import { createHash, randomBytes, randomInt, randomUUID } from 'node:crypto';
import type pg from 'pg';
import { channelDecider, channelStream, CHANNEL_LIMITS, type ChannelCommand, type ChannelTarget, type SubscriptionIn } from '../../domain/notify/channel.js';
import { Conflict, NotFound, Validation } from '../../domain/errors.js';
import type { WebhookPayload } from '../../domain/notify/payload.js';
import type { Signal } from '../../domain/notify/signals.js';
import type { EventMetadata, EventStore } from '../../infra/eventstore/types.js';
import { cancelChannel, enqueue, notificationId, resetFailures } from '../../infra/notify/outbox.js';
import { checkWebhookUrl, RefusedTarget } from '../../infra/notify/webhook.js';
import { countChannels, getChannel, type ChannelOut } from '../../projections/notify/queries.js';
import { handleCommand } from '../handle.js';

/** A peer AS has at most this many channels. */
export const PEER_CHANNEL_LIMIT = 5;

export interface ChannelDeps {
  pool: pg.Pool;
  store: EventStore;
  now: () => Date;
  /** `NOTIFY_WEBHOOK_ALLOW`. */
  webhookAllow: readonly string[];
  /** Whether e-mail can be sent at all (`SMTP_URL`). */
  mailConfigured: boolean;
}

/** Whose channels: the operators' (null) or one peer AS's. */
export type Owner = number | null;

export type ChannelTargetIn = { type: 'webhook'; url: string; payload?: WebhookPayload } | { type: 'email'; address: string };

const hashCode = (code: string) => createHash('sha256').update(code).digest('hex');

async function run(deps: ChannelDeps, channelId: string, command: ChannelCommand, metadata: EventMetadata) {
  return handleCommand(deps.store, channelStream(channelId), channelDecider, command, { ...metadata, recordedAt: deps.now().toISOString() });
}

/** The channel if this owner has it; 404 otherwise (another owner's channel does not exist for this one). */
export async function ownedChannel(deps: Pick<ChannelDeps, 'pool'>, owner: Owner, channelId: string): Promise<ChannelOut> {
  const channel = await getChannel(deps.pool, owner, channelId);
  if (!channel) throw new NotFound(`unknown notification channel ${channelId}`);
  return channel;
}

async function checkedTarget(deps: ChannelDeps, target: ChannelTargetIn, secret: string): Promise<ChannelTarget> {
  if (target.type === 'email') {
    if (!deps.mailConfigured)
      throw new Validation('e-mail channels need the server to send mail (SMTP_URL is not set)', [
        { loc: ['body', 'type'], msg: 'SMTP_URL is not set', type: 'value_error' },
      ]);
    return { type: 'email', address: target.address };
  }
  let url: URL;
  try {
    url = await checkWebhookUrl(target.url, deps.webhookAllow);
  } catch (err) {
    if (err instanceof RefusedTarget) throw new Validation(err.message, [{ loc: ['body', 'url'], msg: err.message, type: 'value_error' }]);
    throw err;
  }
  // Kept as parsed (`http://0x7f.1/` is `http://127.0.0.1/`): what was judged is what is shown and sent to.
  return { type: 'webhook', url: url.href, payload: target.payload ?? 'json', secret };
}

/** A fresh confirmation code for a peer's address: the hash goes into the event, the code into the mail. */
function newCode(now: Date) {
  const code = String(randomInt(0, 1_000_000)).padStart(6, '0');
  return { code, stored: { hash: hashCode(code), expires_at: new Date(now.getTime() + CHANNEL_LIMITS.codeTtlMs).toISOString() } };
}

async function mailCode(deps: ChannelDeps, channelId: string, code: string, now: Date): Promise<void> {
  const signal: Signal = {
    id: `email-confirmation ${channelId} ${now.toISOString()} ${code}`,
    kind: 'email_confirmation',
    severity: 'info',
    node_id: null,
    nodes: [],
    peer_asn: null,
    group: `email_confirmation ${now.toISOString()}`,
    title: 'Confirm your address for dn42 notifications',
    lines: [
      `Your confirmation code: ${code}`,
      '',
      `It is valid for ${CHANNEL_LIMITS.codeTtlMs / 60_000} minutes. Enter it in the portal to receive notifications here.`,
    ],
    at: now.toISOString(),
    facts: {},
  };
  await enqueueNow(deps.pool, channelId, signal, now);
}

export interface CreateChannelIn {
  name: string;
  target: ChannelTargetIn;
}

/** Creates a channel; answers it with its webhook secret (shown this once). */
export async function createChannel(
  deps: ChannelDeps,
  owner: Owner,
  input: CreateChannelIn,
  metadata: EventMetadata,
): Promise<{ channel: ChannelOut; secret: string | null }> {
  if (owner !== null && (await countChannels(deps.pool, owner)) >= PEER_CHANNEL_LIMIT)
    throw new Conflict(`an AS has at most ${PEER_CHANNEL_LIMIT} notification channels`);
  const now = deps.now();
  const channelId = `ch_${randomUUID().replaceAll('-', '').slice(0, 20)}`;
  const secret = `whsec_${randomBytes(24).toString('base64url')}`;
  const target = await checkedTarget(deps, input.target, secret);
  const code = owner !== null && target.type === 'email' ? newCode(now) : null;
  await run(
    deps,
    channelId,
    {
      type: 'CreateChannel',
      channel: { channel_id: channelId, owner_asn: owner, name: input.name, target, created_at: now.toISOString() },
      code: code?.stored ?? null,
    },
    metadata,
  );
  if (code) await mailCode(deps, channelId, code.code, now);
  return { channel: await ownedChannel(deps, owner, channelId), secret: target.type === 'webhook' ? secret : null };
}

export interface UpdateChannelIn {
  name?: string;
  url?: string;
  payload?: WebhookPayload;
  address?: string;
}

export async function updateChannel(deps: ChannelDeps, owner: Owner, channelId: string, input: UpdateChannelIn, metadata: EventMetadata): Promise<ChannelOut> {
  const current = await ownedChannel(deps, owner, channelId);
  const now = deps.now();
  let target: ChannelTarget | undefined;
  if (current.type === 'webhook' && (input.url !== undefined || input.payload !== undefined)) {
    // The secret is kept by the decision; this one is a placeholder it replaces.
    target = await checkedTarget(deps, { type: 'webhook', url: input.url ?? current.url!, payload: input.payload ?? current.payload! }, '');
  } else if (current.type === 'email' && input.address !== undefined) {
    target = await checkedTarget(deps, { type: 'email', address: input.address }, '');
  }
  if ((input.url !== undefined || input.payload !== undefined) && current.type !== 'webhook')
    throw new Validation('url and payload belong to webhook channels', [{ loc: ['body', 'url'], msg: 'not a webhook channel', type: 'value_error' }]);
  if (input.address !== undefined && current.type !== 'email')
    throw new Validation('address belongs to e-mail channels', [{ loc: ['body', 'address'], msg: 'not an e-mail channel', type: 'value_error' }]);
  const code = owner !== null && current.type === 'email' ? newCode(now) : null;
  const { events } = await run(
    deps,
    channelId,
    { type: 'UpdateChannel', channel_id: channelId, name: input.name, target, code: code?.stored ?? null, now: now.toISOString() },
    metadata,
  );
  if (code && events.some((e) => e.type === 'NotificationEmailCodeIssued')) await mailCode(deps, channelId, code.code, now);
  return ownedChannel(deps, owner, channelId);
}

export async function deleteChannel(deps: ChannelDeps, owner: Owner, channelId: string, metadata: EventMetadata): Promise<void> {
  await ownedChannel(deps, owner, channelId);
  await run(deps, channelId, { type: 'DeleteChannel', channel_id: channelId, now: deps.now().toISOString() }, metadata);
  await cancelChannel(deps.pool, channelId);
}

export async function pauseChannel(deps: ChannelDeps, owner: Owner, channelId: string, metadata: EventMetadata): Promise<ChannelOut> {
  await ownedChannel(deps, owner, channelId);
  await run(
    deps,
    channelId,
    { type: 'PauseChannel', channel_id: channelId, reason: 'paused by hand', automatic: false, now: deps.now().toISOString() },
    metadata,
  );
  return ownedChannel(deps, owner, channelId);
}

/** Resumes a paused channel: its failure count starts again and its waiting notifications go out. */
export async function resumeChannel(deps: ChannelDeps, owner: Owner, channelId: string, metadata: EventMetadata): Promise<ChannelOut> {
  await ownedChannel(deps, owner, channelId);
  await resetFailures(deps.pool, channelId);
  await run(deps, channelId, { type: 'ResumeChannel', channel_id: channelId, now: deps.now().toISOString() }, metadata);
  return ownedChannel(deps, owner, channelId);
}

export async function resendCode(deps: ChannelDeps, owner: Owner, channelId: string, metadata: EventMetadata): Promise<void> {
  await ownedChannel(deps, owner, channelId);
  const now = deps.now();
  const code = newCode(now);
  await run(deps, channelId, { type: 'IssueCode', channel_id: channelId, code: code.stored, now: now.toISOString() }, metadata);
  await mailCode(deps, channelId, code.code, now);
}

export async function confirmEmail(deps: ChannelDeps, owner: Owner, channelId: string, code: string, metadata: EventMetadata): Promise<ChannelOut> {
  await ownedChannel(deps, owner, channelId);
  const { events } = await run(
    deps,
    channelId,
    { type: 'ConfirmEmail', channel_id: channelId, code_hash: hashCode(code), now: deps.now().toISOString() },
    metadata,
  );
  if (events.some((e) => e.type === 'NotificationEmailCodeRejected'))
    throw new Validation('wrong confirmation code', [{ loc: ['body', 'code'], msg: 'wrong confirmation code', type: 'value_error' }]);
  return ownedChannel(deps, owner, channelId);
}

export async function addSubscription(deps: ChannelDeps, owner: Owner, channelId: string, input: SubscriptionIn, metadata: EventMetadata): Promise<ChannelOut> {
  await ownedChannel(deps, owner, channelId);
  const subscriptionId = `sub_${randomUUID().replaceAll('-', '').slice(0, 20)}`;
  await run(
    deps,
    channelId,
    { type: 'AddSubscription', channel_id: channelId, subscription_id: subscriptionId, subscription: input, now: deps.now().toISOString() },
    metadata,
  );
  return ownedChannel(deps, owner, channelId);
}

export async function removeSubscription(
  deps: ChannelDeps,
  owner: Owner,
  channelId: string,
  subscriptionId: string,
  metadata: EventMetadata,
): Promise<ChannelOut> {
  await ownedChannel(deps, owner, channelId);
  await run(deps, channelId, { type: 'RemoveSubscription', channel_id: channelId, subscription_id: subscriptionId, now: deps.now().toISOString() }, metadata);
  return ownedChannel(deps, owner, channelId);
}

/** Queues a test notification for one channel (sent even while it is paused, and not counted towards pausing); answers its id. */
export async function testSend(deps: ChannelDeps, owner: Owner, channelId: string): Promise<string> {
  const channel = await ownedChannel(deps, owner, channelId);
  const now = deps.now();
  const id = `test ${channelId} ${now.toISOString()} ${randomUUID()}`;
  const signal: Signal = {
    id,
    kind: 'test',
    severity: 'info',
    node_id: null,
    nodes: [],
    peer_asn: owner,
    group: `test ${id}`,
    title: `Test notification for ${channel.name}`,
    lines: ['This is a test from dn42-control. If you read it, the channel works.'],
    at: now.toISOString(),
    facts: {},
  };
  await enqueueNow(deps.pool, channelId, signal, now);
  return notificationId(id, channelId);
}

/** A notification for one channel outside any subscription (a test send, a confirmation code): due now, never suppressed or folded into a summary. */
function enqueueNow(pool: Parameters<typeof enqueue>[0], channelId: string, signal: Parameters<typeof enqueue>[1]['signal'], now: Date) {
  return enqueue(pool, {
    channel_id: channelId,
    subscription_id: null,
    signal,
    not_before: now,
    cancel_key: null,
    repeat_window_s: 0,
    flood_limit: Number.MAX_SAFE_INTEGER,
  });
}
