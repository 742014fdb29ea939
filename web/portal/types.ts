/**
 * The portal API's answers the pages share, named from the control server's own
 * document (`Answer` reads `.build/generated/control-api.d.ts`): nothing here is
 * a copy of a server shape.
 */

import type { Answer } from '../shared/api.js';

export type RequestRow = Answer<'/autopeering/requests'>['requests'][number];
export type RequestDetail = Answer<'/autopeering/requests/{request_id}'>;
export type NodeOffer = Answer<'/autopeering/nodes'>['nodes'][number];
export type SessionForm = NonNullable<RequestRow['form']>;

export const OBSERVATION_RANGES = ['6h', '24h', '7d', '30d'] as const;

export const FORM_LABELS: Record<SessionForm, string> = {
  'link-local-mp': 'Link-local, multiprotocol',
  'ula-mp': 'ULA, single session',
  'dual-plain': 'Two plain sessions',
};

/** The pill class of a session health. */
export function healthClass(h: string | null | undefined): string {
  return h === 'up' ? 'up' : h === 'connecting' ? 'warn' : h === 'down' ? 'down' : 'unknown';
}
