/**
 * A notification channel, its subscriptions and its deliveries as the server
 * answers them (its schemas NotificationChannel, NotificationSubscription,
 * NotificationDelivery): one shape for the console's `/admin/notifications` and
 * the portal's `/autopeering/notifications`.
 */
import type { Schemas } from './api.js';

export type Channel = Schemas['NotificationChannel'];
export type Subscription = Schemas['NotificationSubscription'];
export type Delivery = Schemas['NotificationDelivery'];
