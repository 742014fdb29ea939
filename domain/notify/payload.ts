import { createHmac } from 'node:crypto';
import type { Signal } from './signals.js';

/**
 * What a channel sends for a signal (issue 32). Webhooks get either the plain
 * JSON document or the `text` form that Slack, Mattermost and Discord accept
 * (`{"text": ..., "content": ...}`: Slack and Mattermost read `text`, Discord
 * `content`); mail gets a subject and a plain-text body. Each webhook request
 * is signed: `X-DN42-Signature: v1=<hex HMAC-SHA256(secret, timestamp + "." + body)>`
 * with the Unix seconds in `X-DN42-Timestamp` (README, "Notifications").
 */
export type WebhookPayload = 'json' | 'text';

export const SIGNATURE_HEADER = 'X-DN42-Signature';
export const TIMESTAMP_HEADER = 'X-DN42-Timestamp';
export const IDEMPOTENCY_HEADER = 'Idempotency-Key';

export interface NotificationDocument {
  /** The idempotency key: the same for every attempt of one notification to one channel. */
  id: string;
  kind: Signal['kind'];
  severity: Signal['severity'];
  node_id: string | null;
  peer_asn: number | null;
  title: string;
  lines: string[];
  at: string;
  facts: Record<string, unknown>;
}

export function documentOf(id: string, signal: Signal): NotificationDocument {
  return {
    id,
    kind: signal.kind,
    severity: signal.severity,
    node_id: signal.node_id,
    peer_asn: signal.peer_asn,
    title: signal.title,
    lines: signal.lines,
    at: signal.at,
    facts: signal.facts,
  };
}

const MARK: Record<Signal['severity'], string> = { info: '[info]', warning: '[warning]', critical: '[CRITICAL]' };

export function textOf(doc: NotificationDocument): string {
  return [`${MARK[doc.severity]} ${doc.title}`, ...doc.lines].join('\n');
}

/** The request body of one webhook delivery. */
export function webhookBody(doc: NotificationDocument, payload: WebhookPayload): string {
  if (payload === 'json') return JSON.stringify(doc);
  const text = textOf(doc);
  return JSON.stringify({ text, content: text.slice(0, 2000), username: 'dn42-control' });
}

export function mailOf(doc: NotificationDocument): { subject: string; text: string } {
  return { subject: `${MARK[doc.severity]} ${doc.title}`, text: `${[...doc.lines, '', `at ${doc.at}`, `id ${doc.id}`].join('\n')}\n` };
}

/** `v1=<hex>`: HMAC-SHA256 over `timestamp + "." + body` with the channel's secret. */
export function signature(secret: string, timestamp: number, body: string): string {
  return `v1=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`;
}
