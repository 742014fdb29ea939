import { Command, InvalidArgumentError, Option } from 'commander';
import { call, collect, fields, integer, remote, show, table, type RemoteOptions } from './manage.js';

/**
 * `dn42-control notifications ...` (issue 32): the operators' notification
 * channels, their subscriptions and delivery logs, over the admin API
 * (`/admin/notifications`), like the other management commands.
 */

interface Channel {
  channel_id: string;
  name: string;
  type: string;
  url: string | null;
  address: string | null;
  paused: boolean;
  pause_reason: string | null;
  consecutive_failures: number;
  last_error: string | null;
  queued: number;
  failed: number;
  subscriptions: { subscription_id: string; kinds: string[]; node_ids: string[]; min_severity: string }[];
}

const CHANNEL_COLUMNS = ['channel_id', 'name', 'type', 'target', 'state', 'queued', 'failed', 'subscriptions'];
const DELIVERY_COLUMNS = ['created_at', 'notification_id', 'kind', 'status', 'attempts', 'last_status', 'last_error', 'title'];

const row = (c: Channel) => ({
  ...c,
  target: c.url ?? c.address,
  state: c.paused ? `paused (${c.pause_reason})` : c.consecutive_failures > 0 ? `failing (${c.consecutive_failures})` : 'active',
  subscriptions: c.subscriptions.length,
});

const path = (id: string, rest = '') => `/admin/notifications/channels/${encodeURIComponent(id)}${rest}`;

function subscriptionLines(c: Channel): string {
  if (c.subscriptions.length === 0) return 'no subscriptions';
  return c.subscriptions
    .map((s) => `${s.subscription_id}  kinds ${s.kinds.join(',') || 'all'}  nodes ${s.node_ids.join(',') || 'all'}  from ${s.min_severity}`)
    .join('\n');
}

export function registerNotificationCommands(program: Command): Command[] {
  const notifications = program.command('notifications').description('notification channels, subscriptions and delivery logs (HTTP API)');
  const channels = notifications.command('channels').description('webhook and e-mail channels');

  remote(channels.command('list').description('the channels with their state')).action(async (_: unknown, cmd: Command) => {
    const o = cmd.opts<RemoteOptions>();
    const list = await call<Channel[]>(o, 'control', 'GET', '/admin/notifications/channels');
    show(o, list, () => table(list.map(row), CHANNEL_COLUMNS));
  });

  remote(
    channels
      .command('add')
      .description('add a webhook (--webhook) or an e-mail (--email) channel; a webhook secret is shown this once')
      .requiredOption('--name <name>', 'a label')
      .option('--webhook <url>', 'webhook URL')
      .addOption(new Option('--payload <form>', 'webhook payload').choices(['json', 'text']).default('json'))
      .option('--email <address>', 'e-mail address'),
  ).action(async (opts: { name: string; webhook?: string; payload: string; email?: string }, cmd: Command) => {
    const o = cmd.opts<RemoteOptions>();
    if ((opts.webhook === undefined) === (opts.email === undefined)) throw new InvalidArgumentError('give exactly one of --webhook and --email');
    const body = opts.webhook
      ? { name: opts.name, type: 'webhook', url: opts.webhook, payload: opts.payload }
      : { name: opts.name, type: 'email', address: opts.email };
    const made = await call<{ channel: Channel; secret: string | null }>(o, 'control', 'POST', '/admin/notifications/channels', body);
    show(o, made, () =>
      [`channel ${made.channel.channel_id} added`, ...(made.secret ? [`webhook signing secret (shown this once): ${made.secret}`] : [])].join('\n'),
    );
  });

  remote(channels.command('show').description('one channel and its subscriptions').argument('<channel_id>')).action(
    async (id: string, _: unknown, cmd: Command) => {
      const o = cmd.opts<RemoteOptions>();
      const c = await call<Channel>(o, 'control', 'GET', path(id));
      show(o, c, () => `${fields({ ...row(c), subscriptions: c.subscriptions.length, last_error: c.last_error })}\n${subscriptionLines(c)}`);
    },
  );

  remote(channels.command('remove').description('delete a channel and its waiting notifications').argument('<channel_id>')).action(
    async (id: string, _: unknown, cmd: Command) => {
      const o = cmd.opts<RemoteOptions>();
      await call(o, 'control', 'DELETE', path(id));
      show(o, { deleted: id }, () => `channel ${id} removed`);
    },
  );

  remote(channels.command('test').description('queue a test notification').argument('<channel_id>')).action(async (id: string, _: unknown, cmd: Command) => {
    const o = cmd.opts<RemoteOptions>();
    const queued = await call<{ notification_id: string }>(o, 'control', 'POST', path(id, '/test'));
    show(o, queued, () => `test notification ${queued.notification_id} queued; see: dn42-control notifications deliveries ${id}`);
  });

  for (const [action, what] of [
    ['pause', 'pause a channel (notifications wait)'],
    ['resume', 'resume a paused channel'],
  ] as const) {
    remote(channels.command(action).description(what).argument('<channel_id>')).action(async (id: string, _: unknown, cmd: Command) => {
      const o = cmd.opts<RemoteOptions>();
      const c = await call<Channel>(o, 'control', 'POST', path(id, `/${action}`));
      show(o, c, () => `channel ${id}: ${row(c).state}`);
    });
  }

  remote(
    notifications
      .command('deliveries')
      .description("a channel's delivery log, newest first")
      .argument('<channel_id>')
      .option('--limit <n>', 'at most this many', integer('--limit'), 50),
  ).action(async (id: string, opts: { limit: number }, cmd: Command) => {
    const o = cmd.opts<RemoteOptions>();
    const list = await call<Record<string, unknown>[]>(o, 'control', 'GET', path(id, `/deliveries?limit=${opts.limit}`));
    show(o, list, () => table(list, DELIVERY_COLUMNS));
  });

  remote(
    notifications
      .command('subscribe')
      .description('subscribe a channel to kinds of notifications')
      .argument('<channel_id>')
      .option('--kind <kind>', 'a kind (repeatable; none: every kind)', collect, [])
      .option('--node <node_id>', 'a node (repeatable; none: every node)', collect, [])
      .addOption(new Option('--min-severity <severity>', 'the least severity').choices(['info', 'warning', 'critical']))
      .option('--repeat-window <seconds>', 'suppress repeats within this window', integer('--repeat-window'))
      .option('--down-after <seconds>', 'session_down: how long a session must stay down', integer('--down-after')),
  ).action(async (id: string, opts: { kind: string[]; node: string[]; minSeverity?: string; repeatWindow?: number; downAfter?: number }, cmd: Command) => {
    const o = cmd.opts<RemoteOptions>();
    const body = {
      kinds: opts.kind,
      node_ids: opts.node,
      ...(opts.minSeverity ? { min_severity: opts.minSeverity } : {}),
      ...(opts.repeatWindow !== undefined ? { repeat_window_s: opts.repeatWindow } : {}),
      ...(opts.downAfter !== undefined ? { down_after_s: opts.downAfter } : {}),
    };
    const c = await call<Channel>(o, 'control', 'POST', path(id, '/subscriptions'), body);
    show(o, c, () => subscriptionLines(c));
  });

  remote(notifications.command('unsubscribe').description('remove a subscription').argument('<channel_id>').argument('<subscription_id>')).action(
    async (id: string, sub: string, _: unknown, cmd: Command) => {
      const o = cmd.opts<RemoteOptions>();
      const c = await call<Channel>(o, 'control', 'DELETE', path(id, `/subscriptions/${encodeURIComponent(sub)}`));
      show(o, c, () => subscriptionLines(c));
    },
  );
  return [notifications];
}
