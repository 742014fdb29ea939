import { Type } from '@sinclair/typebox';
import { SEVERITIES, SIGNAL_KINDS } from '../../../domain/notify/signals.js';
import { component } from '../../shared/routes.js';

const Time = Type.String({ format: 'date-time' });

export const ChannelName = Type.String({ minLength: 1, maxLength: 100, pattern: '^[^\\u0000-\\u001f]+$', description: 'a label for people' });
export const WebhookUrl = Type.String({
  minLength: 1,
  maxLength: 2000,
  description: 'http(s) URL; private, loopback, link-local and metadata addresses are refused unless NOTIFY_WEBHOOK_ALLOW lists them',
});
export const Payload = Type.Union([Type.Literal('json'), Type.Literal('text')], {
  description: 'json: the notification document; text: {text, content} for Slack, Mattermost and Discord',
});
export const Address = Type.String({ format: 'email', maxLength: 254 });
export const Kind = component(
  'NotificationKind',
  Type.Union(
    SIGNAL_KINDS.map((k) => Type.Literal(k)),
    { description: 'a kind of event a subscription receives' },
  ),
);
export const Severity = component(
  'NotificationSeverity',
  Type.Union(
    SEVERITIES.map((s) => Type.Literal(s)),
    { description: 'info, warning or critical' },
  ),
);
const Id = (prefix: string) => Type.String({ pattern: `^${prefix}_[a-f0-9]{20}$`, maxLength: 30 });

export const ChannelParams = Type.Object({ channel_id: Id('ch') });
export const SubscriptionParams = Type.Object({ channel_id: Id('ch'), subscription_id: Id('sub') });

export const ChannelIn = Type.Union(
  [
    Type.Object({ name: ChannelName, type: Type.Literal('webhook'), url: WebhookUrl, payload: Type.Optional(Payload) }, { additionalProperties: false }),
    Type.Object({ name: ChannelName, type: Type.Literal('email'), address: Address }, { additionalProperties: false }),
  ],
  { description: 'a webhook or an e-mail channel' },
);

export const ChannelPatch = Type.Object(
  { name: Type.Optional(ChannelName), url: Type.Optional(WebhookUrl), payload: Type.Optional(Payload), address: Type.Optional(Address) },
  { additionalProperties: false, minProperties: 1 },
);

export const SubscriptionIn = Type.Object(
  {
    kinds: Type.Array(Kind, { maxItems: SIGNAL_KINDS.length, uniqueItems: true, description: 'empty: every kind the owner may receive' }),
    node_ids: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { maxItems: 100, uniqueItems: true, description: 'empty or absent: every node' }),
    ),
    // Optional() clones its schema: the clone is named too, so the field refers to the component.
    min_severity: component('NotificationSeverity', Type.Optional(Severity)),
    repeat_window_s: Type.Optional(
      Type.Integer({ minimum: 0, maximum: 86_400, description: 'repeats of one subject within this window are suppressed (default 600)' }),
    ),
    down_after_s: Type.Optional(Type.Integer({ minimum: 0, maximum: 86_400, description: 'session_down: how long the session must stay down (default 600)' })),
  },
  { additionalProperties: false },
);

const D = (description: string) => ({ description });
const NullableText = (description: string) => Type.Union([Type.String(), Type.Null()], D(description));
const NullableTime = (description: string) => Type.Union([Time, Type.Null()], D(description));

export const SubscriptionOut = component(
  'NotificationSubscription',
  Type.Object(
    {
      subscription_id: Type.String(D('id of the subscription (sub_...)')),
      kinds: Type.Array(Type.String(), D('kinds it receives; empty: every kind its owner may receive')),
      node_ids: Type.Array(Type.String(), D('nodes it is about; empty: every node')),
      min_severity: Type.String(D('the least severity it receives: info, warning or critical')),
      repeat_window_s: Type.Integer(D('repeats of one subject within this many seconds are suppressed')),
      down_after_s: Type.Integer(D('session_down: seconds a session must stay down before it notifies')),
      created_at: Type.String({ format: 'date-time', description: 'when it was made; it receives what happens from then on' }),
    },
    D('what a channel is sent'),
  ),
);

export const ChannelOut = component(
  'NotificationChannel',
  Type.Object(
    {
      channel_id: Type.String(D('id of the channel (ch_...)')),
      name: Type.String(D('its label')),
      type: Type.Union([Type.Literal('webhook'), Type.Literal('email')], D('webhook or email')),
      url: NullableText('webhook URL; null for e-mail'),
      payload: Type.Union([Payload, Type.Null()], D('webhook payload form; null for e-mail')),
      address: NullableText('e-mail address; null for webhooks'),
      confirmed: Type.Boolean(D('false: an e-mail address waiting for its confirmation code (peers)')),
      paused: Type.Boolean(D('paused channels keep their notifications queued until resumed')),
      paused_at: NullableTime('when it was paused'),
      pause_reason: NullableText('why it was paused'),
      pause_automatic: Type.Boolean(D('paused after NOTIFY_PAUSE_AFTER consecutive failed deliveries')),
      consecutive_failures: Type.Integer(D('failed deliveries since the last success or resume')),
      last_error: NullableText("the latest failed attempt's error"),
      last_failure_at: NullableTime('when an attempt last failed'),
      last_success_at: NullableTime('when a notification was last delivered'),
      queued: Type.Integer(D('notifications waiting (queued or to be retried)')),
      failed: Type.Integer(D('notifications given up after 24 h of retries')),
      subscriptions: Type.Array(SubscriptionOut, D('its subscriptions, oldest first')),
      created_at: Type.String({ format: 'date-time', description: 'when it was made' }),
    },
    D('a notification channel; the webhook secret is shown only when the channel is created'),
  ),
);

export const ChannelCreated = Type.Object(
  { channel: ChannelOut, secret: Type.Union([Type.String(), Type.Null()], { description: 'the webhook signing secret, shown this once; null for e-mail' }) },
  { description: 'the new channel' },
);

export const DeliveryOut = component(
  'NotificationDelivery',
  Type.Object(
    {
      notification_id: Type.String(D('the idempotency key the receiver sees (Idempotency-Key)')),
      kind: Type.String(D('what it is about (flap_alert_opened, node_health, ..., test, summary)')),
      severity: Type.String(D('info, warning or critical')),
      node_id: NullableText('the node it is about'),
      title: Type.String(D('its one line')),
      status: Type.Union(
        ['queued', 'attempted', 'delivered', 'failed', 'cancelled'].map((s) => Type.Literal(s)),
        D(
          'queued: not tried yet; attempted: failed and to be retried; delivered; failed: given up after 24 h; cancelled: the session came back, or the channel was deleted',
        ),
      ),
      attempts: Type.Integer(D('attempts so far')),
      last_status: Type.Union([Type.Integer(), Type.Null()], D('HTTP status of the latest attempt (webhooks)')),
      last_error: NullableText('error of the latest attempt'),
      suppressed: Type.Integer(D('repeats folded into this one within the repeat window')),
      created_at: Type.String({ format: 'date-time', description: 'when it happened' }),
      next_attempt_at: NullableTime('when it is tried next (queued or attempted)'),
      delivered_at: NullableTime('when it was delivered'),
    },
    D('one notification to the channel'),
  ),
);

export const DeliveriesQuery = Type.Object({ limit: Type.Integer({ minimum: 1, maximum: 500, default: 100 }) }, { additionalProperties: false });
export const ConfirmIn = Type.Object({ code: Type.String({ pattern: '^[0-9]{6}$' }) }, { additionalProperties: false });
export const TestQueued = Type.Object({ notification_id: Type.String() }, { description: 'the test notification, queued' });
