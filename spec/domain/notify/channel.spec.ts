import { expect } from 'chai';
import { Conflict, IllegalState, NotFound, Validation } from '../../../domain/errors.js';
import { channelDecider, type ChannelEvent, type ChannelRecord } from '../../../domain/notify/channel.js';
import { given } from '../../support/given.js';

const AT = '2026-11-01T12:00:00.000Z';
const LATER = '2026-11-01T12:30:00.000Z';
const CODE = { hash: 'h1', expires_at: '2026-11-01T13:00:00.000Z' };
const hook: ChannelRecord = {
  channel_id: 'ch_1',
  owner_asn: null,
  name: 'noc',
  target: { type: 'webhook', url: 'https://hooks.example/x', payload: 'json', secret: 's1' },
  created_at: AT,
};
const peerMail: ChannelRecord = {
  channel_id: 'ch_2',
  owner_asn: 4242420010,
  name: 'mail',
  target: { type: 'email', address: 'noc@gamma.example' },
  created_at: AT,
};
const created = (c: ChannelRecord, confirmed: boolean): ChannelEvent => ({ type: 'NotificationChannelCreated', data: { ...c, confirmed } });
const issued: ChannelEvent = { type: 'NotificationEmailCodeIssued', data: { channel_id: 'ch_2', code_hash: 'h1', expires_at: CODE.expires_at, at: AT } };
const sub = { kinds: ['session_down' as const], node_ids: [], min_severity: 'info' as const, repeat_window_s: 600, down_after_s: 600 };

describe('Notification channel decider (issue 32)', () => {
  it("creates an operators' channel confirmed, and a peer's e-mail channel waiting for its code", () => {
    given(channelDecider, [])
      .when({ type: 'CreateChannel', channel: hook, code: null })
      .then([created(hook, true)]);
    given(channelDecider, [])
      .when({ type: 'CreateChannel', channel: peerMail, code: CODE })
      .then([created(peerMail, false), issued]);
    given(channelDecider, [created(hook, true)])
      .when({ type: 'CreateChannel', channel: hook, code: null })
      .thenThrows(Conflict, 'notification channel ch_1 already exists');
  });

  it('confirms with the right code, counts wrong ones, and refuses after five or after expiry', () => {
    const history = [created(peerMail, false), issued];
    given(channelDecider, history)
      .when({ type: 'ConfirmEmail', channel_id: 'ch_2', code_hash: 'h1', now: LATER })
      .then([{ type: 'NotificationEmailConfirmed', data: { channel_id: 'ch_2', at: LATER } }]);
    const rejected: ChannelEvent = { type: 'NotificationEmailCodeRejected', data: { channel_id: 'ch_2', at: LATER } };
    given(channelDecider, history).when({ type: 'ConfirmEmail', channel_id: 'ch_2', code_hash: 'nope', now: LATER }).then([rejected]);
    given(channelDecider, [...history, rejected, rejected, rejected, rejected, rejected])
      .when({ type: 'ConfirmEmail', channel_id: 'ch_2', code_hash: 'h1', now: LATER })
      .thenThrows(IllegalState, /tried too often/);
    given(channelDecider, history)
      .when({ type: 'ConfirmEmail', channel_id: 'ch_2', code_hash: 'h1', now: '2026-11-01T13:00:00.000Z' })
      .thenThrows(IllegalState, /expired/);
  });

  it("keeps a webhook's secret when its URL changes, and asks a peer to confirm a new address", () => {
    given(channelDecider, [created(hook, true)])
      .when({
        type: 'UpdateChannel',
        channel_id: 'ch_1',
        target: { type: 'webhook', url: 'https://hooks.example/y', payload: 'text', secret: '' },
        code: null,
        now: LATER,
      })
      .then([
        {
          type: 'NotificationChannelUpdated',
          data: { channel_id: 'ch_1', target: { type: 'webhook', url: 'https://hooks.example/y', payload: 'text', secret: 's1' }, confirmed: true, at: LATER },
        },
      ]);
    const confirmed: ChannelEvent = { type: 'NotificationEmailConfirmed', data: { channel_id: 'ch_2', at: AT } };
    given(channelDecider, [created(peerMail, false), issued, confirmed])
      .when({
        type: 'UpdateChannel',
        channel_id: 'ch_2',
        target: { type: 'email', address: 'ops@gamma.example' },
        code: { hash: 'h2', expires_at: CODE.expires_at },
        now: LATER,
      })
      .thenState((s) => expect(s).to.include({ status: 'Active', confirmed: false }));
    // Nothing changed: nothing written.
    given(channelDecider, [created(hook, true)])
      .when({ type: 'UpdateChannel', channel_id: 'ch_1', name: 'noc', code: null, now: LATER })
      .then([]);
  });

  it('pauses once, resumes once', () => {
    const paused: ChannelEvent = { type: 'NotificationChannelPaused', data: { channel_id: 'ch_1', reason: 'r', automatic: true, at: LATER } };
    given(channelDecider, [created(hook, true)])
      .when({ type: 'PauseChannel', channel_id: 'ch_1', reason: 'r', automatic: true, now: LATER })
      .then([paused]);
    given(channelDecider, [created(hook, true), paused])
      .when({ type: 'PauseChannel', channel_id: 'ch_1', reason: 'again', automatic: true, now: LATER })
      .then([]);
    given(channelDecider, [created(hook, true)])
      .when({ type: 'ResumeChannel', channel_id: 'ch_1', now: LATER })
      .then([]);
  });

  it("limits a peer's subscriptions to the kinds about a peering", () => {
    given(channelDecider, [created(peerMail, true)])
      .when({
        type: 'AddSubscription',
        channel_id: 'ch_2',
        subscription_id: 'sub_1',
        subscription: { ...sub, kinds: ['node_health', 'session_down'] },
        now: LATER,
      })
      .thenThrows(Validation, /a peer can subscribe only to .* \(not node_health\)/);
    given(channelDecider, [created(peerMail, true)])
      .when({ type: 'AddSubscription', channel_id: 'ch_2', subscription_id: 'sub_1', subscription: sub, now: LATER })
      .then([{ type: 'NotificationSubscriptionAdded', data: { channel_id: 'ch_2', subscription: { subscription_id: 'sub_1', ...sub, created_at: LATER } } }]);
    given(channelDecider, [created(hook, true)])
      .when({ type: 'RemoveSubscription', channel_id: 'ch_1', subscription_id: 'sub_9', now: LATER })
      .thenThrows(NotFound);
    given(channelDecider, [created(hook, true), { type: 'NotificationChannelDeleted', data: { channel_id: 'ch_1', at: LATER } }])
      .when({ type: 'ResumeChannel', channel_id: 'ch_1', now: LATER })
      .thenThrows(NotFound, 'unknown notification channel ch_1');
  });
});
