/**
 * What the portal's pages share beside the server's shapes: those they name
 * from the control server's document (`PortalRequestRow`, `RequestLive`,
 * `NodeOffer`, `SessionForm` from `../shared/api.js`).
 */

import type { SessionForm } from '../shared/api.js';

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
