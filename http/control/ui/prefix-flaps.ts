import { Type, type TSchema } from '@sinclair/typebox';
import type { ServiceContext } from '../../shared/context.js';
import { ApiRouter } from '../../shared/routes.js';
import { ADMIN } from '../fleet/common.js';
import { fleetPrefixFlapsView, prefixFlapLocalizationsView } from '../shared/prefix-flaps.js';

const closed = { additionalProperties: false } as const;
const N = Type.Number();
const Nullable = <T extends TSchema>(s: T) => Type.Union([s, Type.Null()]);
const Asn = Nullable(Type.Integer());
const Name = Nullable(Type.String());

const NodeScore = Type.Object(
  { node_id: Type.String(), score: N, changes: Nullable(Type.Integer()), last_change_at: Nullable(Type.String()), rate_per_s: Nullable(N) },
  {
    ...closed,
    description: "one node's view of the row; changes are counted since the key was first scored (not decayed); rate_per_s null without a baseline",
  },
);

const strength = {
  max_score: Type.Number({ description: 'maximum node score decayed to the time of the answer (sort key)' }),
  total_changes: Nullable(Type.Integer()),
  flapping: Type.Boolean({ description: 'max_score >= 20' }),
  rate_per_s: Nullable(N),
  flapping_since: Nullable(Type.String({ description: 'only at alert strength (>= 100), and not within about 60 s of crossing the line' })),
  flap_duration_s: Nullable(Type.Integer()),
  nodes: Type.Array(NodeScore),
};

const direction = { peer_asn: Asn, peer_name: Name, origin_asn: Asn, origin_name: Name, as_path: Nullable(Type.Array(Type.Integer())), ...strength };
const Origin = Type.Object({ asn: Type.Integer(), name: Name }, closed);
const localizationFields = {
  zone: Type.Union(['near', 'origin', 'path', 'moas'].map((z) => Type.Literal(z))),
  confidence: Type.Number({ minimum: 0, maximum: 1 }),
  culprit_asn: Nullable(Type.Integer({ description: 'near: the peer AS of the entry session; origin: the origin AS; else null' })),
  culprit_name: Name,
  culprit_edge: Nullable(Type.Array(Type.Integer(), { minItems: 2, maxItems: 2, description: 'path only: [A, B], A nearer to us' })),
  representative_path: Type.Array(Type.Integer(), { description: 'ASNs from near to origin, prepends collapsed' }),
  signals: Type.Object(
    {
      separation: Type.Number({ minimum: 0, maximum: 1, description: "the strongest (node, peer AS) direction's share of the summed scores" }),
      withdrawal_ratio: Nullable(Type.Number({ minimum: 0, maximum: 1, description: 'withdrawals / (announcements + withdrawals); null without counts' })),
      flap_nodes: Type.Array(Type.String()),
      origins: Nullable(Type.Array(Origin, { description: "moas only (equals the row's origins); else null" })),
      session_flapping: Nullable(Type.Boolean({ description: 'near only; else null' })),
      session_score: Nullable(Type.Number({ description: 'near only (null also without a session record)' })),
    },
    closed,
  ),
};
const Localization = Nullable(
  Type.Object(localizationFields, {
    ...closed,
    description: "the prefix's culprit localisation (docs/flap-localization.md); null when not locatable, never partial",
  }),
);

export const FlatRow = Type.Object({ prefix: Type.String(), ...direction, moas: Type.Boolean(), localization: Localization }, closed);
const PrefixRow = Type.Object(
  {
    prefix: Type.String(),
    peer_asn: Asn,
    peer_name: Name,
    origin_asn: Asn,
    origin_name: Name,
    moas: Type.Boolean(),
    origins: Type.Array(Origin),
    peer_count: Type.Integer(),
    ...strength,
    peers: Type.Array(Type.Object(direction, closed)),
    localization: Localization,
  },
  closed,
);
const Feed = Type.Object(
  {
    node_id: Type.String(),
    feed_state: Type.Union(['established', 'down', 'stale', 'unknown'].map((s) => Type.Literal(s))),
    captured_at: Type.String(),
    total_changes: Nullable(Type.Integer()),
  },
  closed,
);
const Summary = Type.Object({ near: Type.Integer(), origin: Type.Integer(), path: Type.Integer(), moas: Type.Integer() }, closed);
const common = { generated_at: Type.String(), feeds: Type.Array(Feed), localization_summary: Summary };
/** The answer of `/ui/fleet/prefix-flaps` (and of the portal's `/autopeering/fleet/prefix-flaps`, whose allow-list keeps every field). */
export const PrefixFlaps = Type.Union([
  Type.Object({ rows: Type.Array(FlatRow), ...common }, closed),
  Type.Object({ prefixes: Type.Array(PrefixRow), ...common }, closed),
]);
/** The parameters of `/ui/fleet/prefix-flaps`, and of the portal's (document 3: same handler and parameters). */
export const PrefixFlapsQuery = Type.Object(
  {
    min_score: Type.Number({ minimum: 0, default: 1.0 }),
    limit: Type.Integer({
      minimum: 1,
      maximum: 500,
      default: 100,
      description: 'counts prefixes, in both forms (the flat form keeps every direction of the prefixes it lists, at most 500 rows)',
    }),
    group: Type.Optional(Type.Literal('prefix')),
  },
  closed,
);

/** `GET /ui/fleet/prefix-flaps`: the prefix level of flap detection (document 3, "Prefix flap row"). */
export function uiPrefixFlapRoutes(ctx: ServiceContext): ApiRouter {
  const r = new ApiRouter('/control/v1');
  r.route({
    security: ADMIN,
    tags: ['console'],
    method: 'get',
    path: '/ui/fleet/prefix-flaps',
    summary:
      'prefix flap rows decayed to now: flat (prefix, peer_asn) rows, or with group=prefix one row per prefix with its peer directions; at most 500, no paging',
    query: PrefixFlapsQuery,
    responses: {
      200: PrefixFlaps,
      422: 'invalid min_score, limit or group',
    },
    handler: async (req, res) => {
      res.json(await fleetPrefixFlapsView(ctx, req.validQuery));
    },
  });
  r.route({
    security: ADMIN,
    tags: ['console'],
    method: 'get',
    path: '/ui/fleet/prefix-flaps/localize',
    summary: "every located prefix's localisation, by confidence descending (the algorithm of the embedded form, one snapshot); at most 500",
    responses: {
      200: Type.Object(
        {
          localizations: Type.Array(
            Type.Object({ prefix: Type.String({ description: 'the row the localisation belongs to' }), ...localizationFields }, closed),
          ),
        },
        closed,
      ),
    },
    handler: async (_req, res) => {
      res.json(await prefixFlapLocalizationsView(ctx));
    },
  });
  return r;
}
