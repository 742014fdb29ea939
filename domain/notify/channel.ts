import { unreachable, type Decider, type DomainEvent } from '../decider.js';
import { Conflict, IllegalState, NotFound, Validation } from '../errors.js';
import type { WebhookPayload } from './payload.js';
import { PEER_SIGNAL_KINDS, type Severity, type SignalKind } from './signals.js';

/**
 * A notification channel (issue 32), one `notify-channel-<id>` stream each: a
 * webhook or an e-mail address, owned by the operators (`owner_asn` null) or by
 * one peer AS (the portal). Its subscriptions live in the same stream, so a
 * subscription never outlives its channel. A peer's e-mail address receives
 * nothing but its confirmation code until the code comes back.
 */

export const channelStream = (channelId: string): string => `notify-channel-${channelId}`;

/** Limits a decision checks (the routes' schemas bound the rest). */
export const CHANNEL_LIMITS = { subscriptionsPerChannel: 20, codeAttempts: 5, codeTtlMs: 3_600_000, repeatWindowMaxS: 86_400, downAfterMaxS: 86_400 };

export type ChannelTarget = { type: 'webhook'; url: string; payload: WebhookPayload; secret: string } | { type: 'email'; address: string };

export interface SubscriptionRecord {
  subscription_id: string;
  kinds: SignalKind[];
  node_ids: string[];
  min_severity: Severity;
  /** Repeats of one group (same kind and subject) within this many seconds are suppressed. */
  repeat_window_s: number;
  /** session_down only: how long a session must stay down before it notifies. */
  down_after_s: number;
  created_at: string;
}

export interface ChannelRecord {
  channel_id: string;
  owner_asn: number | null;
  name: string;
  target: ChannelTarget;
  created_at: string;
}

export type ChannelEvent =
  | DomainEvent<'NotificationChannelCreated', ChannelRecord & { confirmed: boolean }>
  | DomainEvent<'NotificationChannelUpdated', { channel_id: string; name?: string; target?: ChannelTarget; confirmed: boolean; at: string }>
  | DomainEvent<'NotificationChannelPaused', { channel_id: string; reason: string; automatic: boolean; at: string }>
  | DomainEvent<'NotificationChannelResumed', { channel_id: string; at: string }>
  | DomainEvent<'NotificationChannelDeleted', { channel_id: string; at: string }>
  | DomainEvent<'NotificationEmailCodeIssued', { channel_id: string; code_hash: string; expires_at: string; at: string }>
  | DomainEvent<'NotificationEmailCodeRejected', { channel_id: string; at: string }>
  | DomainEvent<'NotificationEmailConfirmed', { channel_id: string; at: string }>
  | DomainEvent<'NotificationSubscriptionAdded', { channel_id: string; subscription: SubscriptionRecord }>
  | DomainEvent<'NotificationSubscriptionRemoved', { channel_id: string; subscription_id: string; at: string }>;

export const CHANNEL_EVENT_TYPES: readonly ChannelEvent['type'][] = [
  'NotificationChannelCreated',
  'NotificationChannelUpdated',
  'NotificationChannelPaused',
  'NotificationChannelResumed',
  'NotificationChannelDeleted',
  'NotificationEmailCodeIssued',
  'NotificationEmailCodeRejected',
  'NotificationEmailConfirmed',
  'NotificationSubscriptionAdded',
  'NotificationSubscriptionRemoved',
];

interface Code {
  hash: string;
  expires_at: string;
  rejected: number;
}

export type ChannelState =
  | { status: 'Empty' }
  | { status: 'Active'; channel: ChannelRecord; confirmed: boolean; paused: boolean; code: Code | null; subscriptions: Map<string, SubscriptionRecord> }
  | { status: 'Deleted' };

export interface SubscriptionIn {
  kinds: SignalKind[];
  node_ids: string[];
  min_severity: Severity;
  repeat_window_s: number;
  down_after_s: number;
}

export type ChannelCommand =
  | { type: 'CreateChannel'; channel: ChannelRecord; code: { hash: string; expires_at: string } | null }
  | { type: 'UpdateChannel'; channel_id: string; name?: string; target?: ChannelTarget; code: { hash: string; expires_at: string } | null; now: string }
  | { type: 'PauseChannel'; channel_id: string; reason: string; automatic: boolean; now: string }
  | { type: 'ResumeChannel'; channel_id: string; now: string }
  | { type: 'DeleteChannel'; channel_id: string; now: string }
  | { type: 'IssueCode'; channel_id: string; code: { hash: string; expires_at: string }; now: string }
  | { type: 'ConfirmEmail'; channel_id: string; code_hash: string; now: string }
  | { type: 'AddSubscription'; channel_id: string; subscription_id: string; subscription: SubscriptionIn; now: string }
  | { type: 'RemoveSubscription'; channel_id: string; subscription_id: string; now: string };

/** A channel of a peer: its e-mail address must be confirmed, and its subscriptions are about its own peerings only. */
const isPeer = (channel: ChannelRecord): boolean => channel.owner_asn !== null;

function active(state: ChannelState, channelId: string) {
  if (state.status !== 'Active') throw new NotFound(`unknown notification channel ${channelId}`);
  return state;
}

function fieldError(field: string, message: string): Validation {
  return new Validation(message, [{ loc: ['body', field], msg: message, type: 'value_error' }]);
}

function checkSubscription(channel: ChannelRecord, s: SubscriptionIn): void {
  if (isPeer(channel)) {
    const foreign = s.kinds.filter((k) => !PEER_SIGNAL_KINDS.includes(k));
    if (foreign.length > 0) throw fieldError('kinds', `a peer can subscribe only to ${PEER_SIGNAL_KINDS.join(', ')} (not ${foreign.join(', ')})`);
  }
  if (s.repeat_window_s > CHANNEL_LIMITS.repeatWindowMaxS) throw fieldError('repeat_window_s', `repeat_window_s is at most ${CHANNEL_LIMITS.repeatWindowMaxS}`);
  if (s.down_after_s > CHANNEL_LIMITS.downAfterMaxS) throw fieldError('down_after_s', `down_after_s is at most ${CHANNEL_LIMITS.downAfterMaxS}`);
}

export const channelDecider: Decider<ChannelCommand, ChannelEvent, ChannelState> = {
  initialState: () => ({ status: 'Empty' }),

  evolve(state, event) {
    switch (event.type) {
      case 'NotificationChannelCreated': {
        const { confirmed, ...channel } = event.data;
        return { status: 'Active', channel, confirmed, paused: false, code: null, subscriptions: new Map() };
      }
      case 'NotificationChannelDeleted':
        return { status: 'Deleted' };
      default:
        break;
    }
    if (state.status !== 'Active') return state;
    switch (event.type) {
      case 'NotificationChannelUpdated': {
        const channel = {
          ...state.channel,
          ...(event.data.name !== undefined ? { name: event.data.name } : {}),
          ...(event.data.target ? { target: event.data.target } : {}),
        };
        return { ...state, channel, confirmed: event.data.confirmed };
      }
      case 'NotificationChannelPaused':
        return { ...state, paused: true };
      case 'NotificationChannelResumed':
        return { ...state, paused: false };
      case 'NotificationEmailCodeIssued':
        return { ...state, code: { hash: event.data.code_hash, expires_at: event.data.expires_at, rejected: 0 } };
      case 'NotificationEmailCodeRejected':
        return state.code ? { ...state, code: { ...state.code, rejected: state.code.rejected + 1 } } : state;
      case 'NotificationEmailConfirmed':
        return { ...state, confirmed: true, code: null };
      case 'NotificationSubscriptionAdded': {
        const subscriptions = new Map(state.subscriptions);
        subscriptions.set(event.data.subscription.subscription_id, event.data.subscription);
        return { ...state, subscriptions };
      }
      case 'NotificationSubscriptionRemoved': {
        const subscriptions = new Map(state.subscriptions);
        subscriptions.delete(event.data.subscription_id);
        return { ...state, subscriptions };
      }
      default:
        return unreachable(event);
    }
  },

  decide(command, state) {
    switch (command.type) {
      case 'CreateChannel': {
        if (state.status !== 'Empty') throw new Conflict(`notification channel ${command.channel.channel_id} already exists`);
        const needsCode = isPeer(command.channel) && command.channel.target.type === 'email';
        const events: ChannelEvent[] = [{ type: 'NotificationChannelCreated', data: { ...command.channel, confirmed: !needsCode } }];
        if (needsCode) events.push(codeIssued(command.channel.channel_id, command.code, command.channel.created_at));
        return events;
      }
      case 'UpdateChannel': {
        const s = active(state, command.channel_id);
        if (command.target && command.target.type !== s.channel.target.type) throw fieldError('type', 'a channel keeps its type; create another channel');
        const target = command.target && {
          ...command.target,
          ...(s.channel.target.type === 'webhook' && command.target.type === 'webhook' ? { secret: s.channel.target.secret } : {}),
        };
        const addressChanged = target?.type === 'email' && s.channel.target.type === 'email' && target.address !== s.channel.target.address;
        const reconfirm = isPeer(s.channel) && addressChanged;
        const changed =
          (command.name !== undefined && command.name !== s.channel.name) || (target && JSON.stringify(target) !== JSON.stringify(s.channel.target));
        if (!changed) return [];
        const events: ChannelEvent[] = [
          {
            type: 'NotificationChannelUpdated',
            data: {
              channel_id: command.channel_id,
              ...(command.name !== undefined ? { name: command.name } : {}),
              ...(target ? { target } : {}),
              confirmed: reconfirm ? false : s.confirmed,
              at: command.now,
            },
          },
        ];
        if (reconfirm) events.push(codeIssued(command.channel_id, command.code, command.now));
        return events;
      }
      case 'PauseChannel': {
        const s = active(state, command.channel_id);
        if (s.paused) return [];
        return [
          {
            type: 'NotificationChannelPaused',
            data: { channel_id: command.channel_id, reason: command.reason, automatic: command.automatic, at: command.now },
          },
        ];
      }
      case 'ResumeChannel': {
        const s = active(state, command.channel_id);
        if (!s.paused) return [];
        return [{ type: 'NotificationChannelResumed', data: { channel_id: command.channel_id, at: command.now } }];
      }
      case 'DeleteChannel':
        active(state, command.channel_id);
        return [{ type: 'NotificationChannelDeleted', data: { channel_id: command.channel_id, at: command.now } }];
      case 'IssueCode': {
        const s = active(state, command.channel_id);
        if (s.channel.target.type !== 'email' || s.confirmed) throw new IllegalState('this channel has no address waiting for confirmation');
        return [codeIssued(command.channel_id, command.code, command.now)];
      }
      case 'ConfirmEmail': {
        const s = active(state, command.channel_id);
        if (s.channel.target.type !== 'email' || s.confirmed) throw new IllegalState('this channel has no address waiting for confirmation');
        const code = s.code;
        if (!code || code.rejected >= CHANNEL_LIMITS.codeAttempts || code.expires_at <= command.now)
          throw new IllegalState('the confirmation code has expired or was tried too often: ask for a new one');
        if (code.hash !== command.code_hash) return [{ type: 'NotificationEmailCodeRejected', data: { channel_id: command.channel_id, at: command.now } }];
        return [{ type: 'NotificationEmailConfirmed', data: { channel_id: command.channel_id, at: command.now } }];
      }
      case 'AddSubscription': {
        const s = active(state, command.channel_id);
        if (s.subscriptions.size >= CHANNEL_LIMITS.subscriptionsPerChannel)
          throw new Conflict(`a channel has at most ${CHANNEL_LIMITS.subscriptionsPerChannel} subscriptions`);
        checkSubscription(s.channel, command.subscription);
        return [
          {
            type: 'NotificationSubscriptionAdded',
            data: {
              channel_id: command.channel_id,
              subscription: { subscription_id: command.subscription_id, ...command.subscription, created_at: command.now },
            },
          },
        ];
      }
      case 'RemoveSubscription': {
        const s = active(state, command.channel_id);
        if (!s.subscriptions.has(command.subscription_id)) throw new NotFound(`unknown subscription ${command.subscription_id}`);
        return [
          { type: 'NotificationSubscriptionRemoved', data: { channel_id: command.channel_id, subscription_id: command.subscription_id, at: command.now } },
        ];
      }
      default: {
        const _never: never = command;
        return unreachable(_never);
      }
    }
  },
};

function codeIssued(channelId: string, code: { hash: string; expires_at: string } | null, at: string): ChannelEvent {
  if (!code) throw new Error('a peer e-mail channel needs a confirmation code');
  return { type: 'NotificationEmailCodeIssued', data: { channel_id: channelId, code_hash: code.hash, expires_at: code.expires_at, at } };
}
