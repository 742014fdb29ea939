import { fileURLToPath } from 'node:url';
import { CHANNEL_EVENT_TYPES, type ChannelEvent, type ChannelTarget } from '../../domain/notify/channel.js';
import type { RecordedEvent, TransactionContext } from '../../infra/eventstore/types.js';
import type { Projection } from '../runtime/projection.js';

/** `notify_channels` and `notify_subscriptions`: the notification channels of every `notify-channel-<id>` stream (issue 32). */
export const notifyChannelsProjection: Projection = {
  name: 'notify-channels',
  mode: 'inline',
  handles: CHANNEL_EVENT_TYPES,
  tables: ['notify_subscriptions', 'notify_channels'],
  migrations: { name: 'notify-channels', dir: fileURLToPath(new URL('./migrations', import.meta.url)) },
  apply: applyChannelEvent,
};

const targetColumns = (t: ChannelTarget) => (t.type === 'webhook' ? [t.type, t.url, t.payload, t.secret, null] : [t.type, null, null, null, t.address]);

async function applyChannelEvent(tx: TransactionContext, recorded: RecordedEvent): Promise<void> {
  const event = { type: recorded.type, data: recorded.data } as ChannelEvent;
  switch (event.type) {
    case 'NotificationChannelCreated': {
      const d = event.data;
      await tx.query(
        `INSERT INTO notify_channels (channel_id, owner_asn, name, type, url, payload, secret, address, confirmed, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $10)`,
        [d.channel_id, d.owner_asn, d.name, ...targetColumns(d.target), d.confirmed, d.created_at],
      );
      return;
    }
    case 'NotificationChannelUpdated': {
      const d = event.data;
      if (d.name !== undefined) await tx.query(`UPDATE notify_channels SET name = $2 WHERE channel_id = $1`, [d.channel_id, d.name]);
      if (d.target)
        await tx.query(`UPDATE notify_channels SET type = $2, url = $3, payload = $4, secret = $5, address = $6 WHERE channel_id = $1`, [
          d.channel_id,
          ...targetColumns(d.target),
        ]);
      await tx.query(`UPDATE notify_channels SET confirmed = $2, updated_at = $3 WHERE channel_id = $1`, [d.channel_id, d.confirmed, d.at]);
      return;
    }
    case 'NotificationChannelPaused':
      await tx.query(
        `UPDATE notify_channels SET paused = true, paused_at = $2, pause_reason = $3, pause_automatic = $4, updated_at = $2 WHERE channel_id = $1`,
        [event.data.channel_id, event.data.at, event.data.reason, event.data.automatic],
      );
      return;
    case 'NotificationChannelResumed':
      await tx.query(
        `UPDATE notify_channels SET paused = false, paused_at = NULL, pause_reason = NULL, pause_automatic = false, updated_at = $2 WHERE channel_id = $1`,
        [event.data.channel_id, event.data.at],
      );
      return;
    case 'NotificationChannelDeleted':
      await tx.query(`DELETE FROM notify_channels WHERE channel_id = $1`, [event.data.channel_id]);
      return;
    case 'NotificationEmailCodeIssued':
      await tx.query(`UPDATE notify_channels SET code_hash = $2, code_expires_at = $3, updated_at = $4 WHERE channel_id = $1`, [
        event.data.channel_id,
        event.data.code_hash,
        event.data.expires_at,
        event.data.at,
      ]);
      return;
    case 'NotificationEmailCodeRejected':
      return;
    case 'NotificationEmailConfirmed':
      await tx.query(`UPDATE notify_channels SET confirmed = true, code_hash = NULL, code_expires_at = NULL, updated_at = $2 WHERE channel_id = $1`, [
        event.data.channel_id,
        event.data.at,
      ]);
      return;
    case 'NotificationSubscriptionAdded': {
      const s = event.data.subscription;
      await tx.query(
        `INSERT INTO notify_subscriptions (subscription_id, channel_id, kinds, node_ids, min_severity, repeat_window_s, down_after_s, created_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
        [s.subscription_id, event.data.channel_id, s.kinds, s.node_ids, s.min_severity, s.repeat_window_s, s.down_after_s, s.created_at],
      );
      return;
    }
    case 'NotificationSubscriptionRemoved':
      await tx.query(`DELETE FROM notify_subscriptions WHERE subscription_id = $1 AND channel_id = $2`, [event.data.subscription_id, event.data.channel_id]);
      return;
  }
}
