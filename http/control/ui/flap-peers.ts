import { Type } from '@sinclair/typebox';
import type { ServiceContext } from '../../shared/context.js';
import { ApiRouter, component } from '../../shared/routes.js';
import { ADMIN } from '../fleet/common.js';
import { FlapAlert } from './flaps/history.js';
import { FlatRow } from './prefix-flaps.js';
import { Count, NullableNumber, NullableString, UNAUTHORIZED } from './schemas.js';
import { flapPeersView, flapPeerView } from '../shared/flap-peers.js';

const closed = { additionalProperties: false } as const;

export const PeerSession = component(
  'FlapPeerSession',
  Type.Object(
    {
      node_id: Type.String({ description: 'the node of the session' }),
      session: Type.String({ description: 'BIRD protocol name' }),
      state: Type.String({ description: 'the BIRD protocol state as reported' }),
      flap_score: Type.Union([Type.Number(), Type.Null()], {
        description: "decayed to now from each flap's captured_at (half-life 30 min); null: no flap record (never flapped); 0: recorded, decayed",
      }),
      flapping: Type.Boolean({ description: 'flap_score >= 3' }),
    },
    { ...closed, description: 'one of our eBGP sessions to the peer AS, with its flap score' },
  ),
);

const peerRow = {
  asn: Type.Integer({ description: 'the peer AS' }),
  name: { ...NullableString, description: 'registry as-name; null without a replica or unknown' },
  severity: Type.Number({
    description: 'max(prefix_score_max / 20, session_score_max / 3): each level over its list line; >= 1 means a prefix or a session of the peer is flapping',
  }),
  prefix_count: { ...Count, description: 'prefixes with flap records entering through the AS' },
  prefixes_flapping: { ...Count, description: 'of those, the ones over the prefix list line (score >= 20)' },
  prefix_score_max: { ...NullableNumber, description: "the highest prefix score (each prefix's highest over the nodes); null: no prefix" },
  session_score_max: { ...NullableNumber, description: 'the highest session flap score; null: no session with a flap record' },
  nodes: Type.Array(Type.String(), { description: 'the nodes with a prefix or a session of the AS, sorted' }),
  last_change_at: { ...NullableString, description: 'the latest prefix flap or session transition; null: none recorded' },
  sessions: Type.Array(PeerSession, { description: 'our eBGP sessions to the AS, by node and name' }),
};
const PeerRow = component('FlapPeerRow', Type.Object(peerRow, { ...closed, description: 'flap peer row (document 3, "Other flap records")' }));

/** The list sizes of `/ui/fleet/flap-peers/{asn}` (and of the portal's `/my/flaps`). */
export const FlapPeerQuery = Type.Object(
  {
    prefixes_limit: Type.Integer({ minimum: 1, maximum: 200, default: 50 }),
    alerts_limit: Type.Integer({ minimum: 1, maximum: 100, default: 20 }),
  },
  closed,
);

const AsnParams = Type.Object({ asn: Type.Integer({ minimum: 1, maximum: 4294967295 }) });

/** `GET /ui/fleet/flap-peers` and `/ui/fleet/flap-peers/{asn}`: flap evidence per peer AS (document 3). */
export function uiFlapPeerRoutes(ctx: ServiceContext): ApiRouter {
  const common = { method: 'get' as const, tags: ['console'], security: ADMIN };
  return new ApiRouter('/control/v1')
    .route({
      ...common,
      path: '/ui/fleet/flap-peers',
      summary: 'peer ASes with flap data (prefix rows, eBGP session scores or kept alerts), by severity descending',
      query: Type.Object({ limit: Type.Integer({ minimum: 1, maximum: 200, default: 50 }) }, closed),
      responses: {
        200: Type.Object({ generated_at: Type.String(), peers: Type.Array(PeerRow) }, closed),
        ...UNAUTHORIZED,
        422: 'invalid limit',
      },
      handler: async (req, res) => {
        res.json(await flapPeersView(ctx, req.validQuery));
      },
    })
    .route({
      ...common,
      path: '/ui/fleet/flap-peers/{asn}',
      summary:
        "one peer AS's row with its prefix flap rows (score >= 0.5) and its alerts (prefix alerts of its direction, session alerts of its eBGP sessions), newest first",
      params: AsnParams,
      query: FlapPeerQuery,
      responses: {
        200: Type.Object(
          {
            generated_at: Type.String(),
            ...peerRow,
            prefixes: Type.Array(FlatRow),
            alerts: Type.Array(FlapAlert, { description: 'open and resolved, newest first' }),
          },
          closed,
        ),
        ...UNAUTHORIZED,
        404: 'no flap data for AS<asn>',
        422: 'invalid asn, prefixes_limit or alerts_limit',
      },
      handler: async (req, res) => {
        res.json(await flapPeerView(ctx, Number(req.params.asn), req.validQuery));
      },
    });
}
