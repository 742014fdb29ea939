import { Type } from '@sinclair/typebox';
import type { Request, Response } from 'express';
import {
  addSubscription,
  confirmEmail,
  createChannel,
  deleteChannel,
  ownedChannel,
  pauseChannel,
  removeSubscription,
  resendCode,
  resumeChannel,
  testSend,
  updateChannel,
  type ChannelDeps,
  type Owner,
} from '../../../commands/notify/channels.js';
import { PEER_SIGNAL_KINDS, SIGNAL_KINDS, type SignalKind } from '../../../domain/notify/signals.js';
import { listChannels, listDeliveries } from '../../../projections/notify/queries.js';
import type { ServiceContext } from '../../shared/context.js';
import { requestMetadata } from '../../shared/metadata.js';
import { ApiRouter } from '../../shared/routes.js';
import { ADMIN } from '../fleet/common.js';
import { PORTAL_NO_ASN, PORTAL_UNAUTHORIZED, requireVerifiedAsn } from '../portal/auth.js';
import { PORTAL_SECURITY } from '../portal/schemas.js';
import {
  ChannelCreated,
  ChannelIn,
  ChannelOut,
  ChannelParams,
  ChannelPatch,
  ConfirmIn,
  DeliveriesQuery,
  DeliveryOut,
  SubscriptionIn,
  SubscriptionParams,
  TestQueued,
} from './schemas.js';

/** Defaults of a subscription's optional fields. */
const SUBSCRIPTION_DEFAULTS = { min_severity: 'info', repeat_window_s: 600, down_after_s: 600 } as const;

interface Surface {
  /** `/admin/notifications` or `/autopeering/notifications`. */
  base: string;
  security: string[];
  tags: string[];
  /** The owner of a request's channels; throws the surface's 401/403 when there is none. */
  owner: (res: Response) => Owner;
  /** Kinds an empty `kinds` list stands for. */
  kinds: readonly SignalKind[];
  errors: Record<number, string>;
  /** Whether e-mail addresses are confirmed with a code (peers). */
  confirms: boolean;
}

export function channelDeps(ctx: ServiceContext): ChannelDeps {
  return { pool: ctx.pool, store: ctx.store, now: ctx.now, webhookAllow: ctx.config.notifyWebhookAllow, mailConfigured: ctx.config.smtpUrl !== undefined };
}

/**
 * The channel routes of one surface: the operators' under
 * `/admin/notifications` (admin credentials) and a peer's under
 * `/autopeering/notifications` (portal session, its verified ASN owns the
 * channels). Every lookup is by owner, so a channel of another owner is a 404.
 */
function channelRoutes(ctx: ServiceContext, s: Surface): ApiRouter {
  const deps = channelDeps(ctx);
  const r = new ApiRouter('/control/v1');
  const common = { security: s.security, tags: s.tags };
  const unknown = { 404: 'unknown notification channel', 422: 'a malformed channel id (not ch_ and 20 hex digits)', ...s.errors };
  const meta = (req: Request, res: Response) => requestMetadata(req, res, ctx.now());
  r.route({
    ...common,
    method: 'get',
    path: `${s.base}/channels`,
    summary: 'the notification channels with their delivery state and subscriptions',
    responses: { 200: Type.Array(ChannelOut, { description: 'channels by creation' }), ...s.errors },
    handler: async (_req, res) => {
      res.json(await listChannels(ctx.pool, s.owner(res)));
    },
  });
  r.route({
    ...common,
    method: 'post',
    path: `${s.base}/channels`,
    summary: s.confirms
      ? 'add a webhook or e-mail channel; an e-mail address receives a confirmation code and nothing else until it is confirmed'
      : 'add a webhook or e-mail channel; the answer carries the webhook signing secret, shown this once',
    body: ChannelIn,
    responses: { 201: ChannelCreated, 409: 'too many channels', 422: 'invalid field, refused webhook address, or no mail sender', ...s.errors },
    handler: async (req, res) => {
      const owner = s.owner(res);
      const body = req.body;
      const target =
        body.type === 'webhook' ? { type: 'webhook' as const, url: body.url, payload: body.payload } : { type: 'email' as const, address: body.address };
      res.status(201).json(await createChannel(deps, owner, { name: body.name, target }, meta(req, res)));
    },
  });
  r.route({
    ...common,
    method: 'get',
    path: `${s.base}/channels/{channel_id}`,
    summary: 'one channel',
    params: ChannelParams,
    responses: { 200: ChannelOut, ...unknown },
    handler: async (req, res) => {
      res.json(await ownedChannel(deps, s.owner(res), req.params.channel_id));
    },
  });
  r.route({
    ...common,
    method: 'patch',
    path: `${s.base}/channels/{channel_id}`,
    summary: s.confirms ? 'rename, or change the URL, payload or address (a new address is confirmed again)' : 'rename, or change the URL, payload or address',
    params: ChannelParams,
    body: ChannelPatch,
    responses: { ...unknown, 200: ChannelOut, 422: 'invalid field, refused webhook address or malformed channel id' },
    handler: async (req, res) => {
      res.json(await updateChannel(deps, s.owner(res), req.params.channel_id, req.body, meta(req, res)));
    },
  });
  r.route({
    ...common,
    method: 'delete',
    path: `${s.base}/channels/{channel_id}`,
    summary: 'delete a channel, its subscriptions and its waiting notifications',
    params: ChannelParams,
    responses: { 204: 'deleted', ...unknown },
    handler: async (req, res) => {
      await deleteChannel(deps, s.owner(res), req.params.channel_id, meta(req, res));
      res.status(204).end();
    },
  });
  r.route({
    ...common,
    method: 'post',
    path: `${s.base}/channels/{channel_id}/test`,
    summary: 'queue a test notification (sent even while the channel is paused; its outcome is in the delivery log)',
    params: ChannelParams,
    responses: { 202: TestQueued, ...unknown },
    handler: async (req, res) => {
      res.status(202).json({ notification_id: await testSend(deps, s.owner(res), req.params.channel_id) });
    },
  });
  r.route({
    ...common,
    method: 'post',
    path: `${s.base}/channels/{channel_id}/pause`,
    summary: 'pause a channel: its notifications wait until it is resumed',
    params: ChannelParams,
    responses: { 200: ChannelOut, ...unknown },
    handler: async (req, res) => {
      res.json(await pauseChannel(deps, s.owner(res), req.params.channel_id, meta(req, res)));
    },
  });
  r.route({
    ...common,
    method: 'post',
    path: `${s.base}/channels/{channel_id}/resume`,
    summary: 'resume a paused channel (paused by hand or after repeated failures); its waiting notifications go out',
    params: ChannelParams,
    responses: { 200: ChannelOut, ...unknown },
    handler: async (req, res) => {
      res.json(await resumeChannel(deps, s.owner(res), req.params.channel_id, meta(req, res)));
    },
  });
  r.route({
    ...common,
    method: 'get',
    path: `${s.base}/channels/{channel_id}/deliveries`,
    summary: 'the delivery log: notifications to the channel, newest first, with status, attempts and the last error',
    params: ChannelParams,
    query: DeliveriesQuery,
    responses: { 200: Type.Array(DeliveryOut, { description: 'deliveries, newest first' }), ...unknown },
    handler: async (req, res) => {
      await ownedChannel(deps, s.owner(res), req.params.channel_id);
      res.json(await listDeliveries(ctx.pool, req.params.channel_id, req.validQuery.limit));
    },
  });
  r.route({
    ...common,
    method: 'post',
    path: `${s.base}/channels/{channel_id}/subscriptions`,
    summary: `subscribe the channel to kinds (${s.kinds.join(', ')}), optionally nodes and a least severity`,
    params: ChannelParams,
    body: SubscriptionIn,
    responses: { ...unknown, 201: ChannelOut, 409: 'too many subscriptions', 422: 'invalid field, a kind this owner cannot receive, or malformed channel id' },
    handler: async (req, res) => {
      const b = req.body;
      const input = {
        kinds: b.kinds,
        node_ids: b.node_ids ?? [],
        min_severity: b.min_severity ?? SUBSCRIPTION_DEFAULTS.min_severity,
        repeat_window_s: b.repeat_window_s ?? SUBSCRIPTION_DEFAULTS.repeat_window_s,
        down_after_s: b.down_after_s ?? SUBSCRIPTION_DEFAULTS.down_after_s,
      };
      res.status(201).json(await addSubscription(deps, s.owner(res), req.params.channel_id, input, meta(req, res)));
    },
  });
  r.route({
    ...common,
    method: 'delete',
    path: `${s.base}/channels/{channel_id}/subscriptions/{subscription_id}`,
    summary: 'remove a subscription',
    params: SubscriptionParams,
    responses: { 200: ChannelOut, 404: 'unknown notification channel or subscription', 422: 'a malformed channel or subscription id', ...s.errors },
    handler: async (req, res) => {
      res.json(await removeSubscription(deps, s.owner(res), req.params.channel_id, req.params.subscription_id, meta(req, res)));
    },
  });
  if (s.confirms) {
    r.route({
      ...common,
      method: 'post',
      path: `${s.base}/channels/{channel_id}/confirm`,
      summary: 'confirm an e-mail address with the code mailed to it',
      params: ChannelParams,
      body: ConfirmIn,
      responses: {
        ...unknown,
        200: ChannelOut,
        409: 'nothing to confirm, or the code expired or was tried too often',
        422: 'wrong confirmation code or malformed channel id',
      },
      handler: async (req, res) => {
        res.json(await confirmEmail(deps, s.owner(res), req.params.channel_id, req.body.code, meta(req, res)));
      },
    });
    r.route({
      ...common,
      method: 'post',
      path: `${s.base}/channels/{channel_id}/confirmation-code`,
      summary: 'mail a new confirmation code (the earlier one stops working)',
      params: ChannelParams,
      responses: { 204: 'a new code is on its way', 409: 'nothing to confirm', ...unknown },
      handler: async (req, res) => {
        await resendCode(deps, s.owner(res), req.params.channel_id, meta(req, res));
        res.status(204).end();
      },
    });
  }
  return r;
}

/** `/admin/notifications/...`: the operators' channels. */
export function adminNotificationRoutes(ctx: ServiceContext): ApiRouter {
  return channelRoutes(ctx, {
    base: '/admin/notifications',
    security: ADMIN,
    tags: ['notifications'],
    owner: () => null,
    kinds: SIGNAL_KINDS,
    errors: {},
    confirms: false,
  });
}

/** `/autopeering/notifications/...`: a peer's channels, about its own peerings only. */
export function portalNotificationRoutes(ctx: ServiceContext): ApiRouter {
  return channelRoutes(ctx, {
    base: '/autopeering/notifications',
    security: PORTAL_SECURITY,
    tags: ['portal'],
    owner: (res) => requireVerifiedAsn(res).asn,
    kinds: PEER_SIGNAL_KINDS,
    errors: { ...PORTAL_UNAUTHORIZED, ...PORTAL_NO_ASN },
    confirms: true,
  });
}
