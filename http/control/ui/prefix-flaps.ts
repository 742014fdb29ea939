import { Type, type TSchema } from '@sinclair/typebox';
import type { ServiceContext } from '../../shared/context.js';
import { ApiRouter, component } from '../../shared/routes.js';
import { ADMIN } from '../fleet/common.js';
import { fleetPrefixFlapsView, prefixFlapLocalizationsView } from '../shared/prefix-flaps.js';

const closed = { additionalProperties: false } as const;
const Nullable = <T extends TSchema>(s: T, description: string) => Type.Union([s, Type.Null()], { description });
const Asn = (description: string) => Nullable(Type.Integer(), description);
const Name = (description: string) => Nullable(Type.String(), description);
const RatePerSecond = (description: string) => Nullable(Type.Number(), `${description}; null means no baseline (not zero)`);

const NodeScore = Type.Object(
  {
    node_id: Type.String({ description: 'the node' }),
    score: Type.Number({ description: "the node's score decayed to now" }),
    changes: Nullable(Type.Integer(), 'changes counted since the key was first scored (not decayed)'),
    last_change_at: Nullable(Type.String(), 'the latest change the node saw'),
    rate_per_s: RatePerSecond("the node's change rate per second"),
  },
  {
    ...closed,
    description: "one node's view of the row; changes are counted since the key was first scored (not decayed); rate_per_s null without a baseline",
  },
);

const strength = {
  max_score: Type.Number({ description: 'maximum node score decayed to the time of the answer (sort key)' }),
  total_changes: Nullable(Type.Integer(), 'sum of node change counts (not decayed)'),
  flapping: Type.Boolean({ description: 'max_score >= 20' }),
  rate_per_s: RatePerSecond('change rate per second, summed across nodes and directions'),
  flapping_since: Nullable(Type.String(), 'only at alert strength (>= 100), and not within about 60 s of crossing the line'),
  flap_duration_s: Nullable(Type.Integer(), 'seconds since flapping_since; only at alert strength (>= 100), else null'),
  nodes: Type.Array(NodeScore, { description: 'by score descending; more than one node means fleet-wide' }),
};

const direction = {
  peer_asn: Asn('first AS-path hop after the local AS (where the flap enters the fleet); null for own origin or no attribution'),
  peer_name: Name('registry as-name of peer_asn, or null'),
  origin_asn: Asn('last hop of the same path'),
  origin_name: Name('registry as-name of origin_asn, or null'),
  as_path: Nullable(Type.Array(Type.Integer()), 'ASNs from the first hop after the local AS to the origin, prepends collapsed; null when not reported'),
  ...strength,
};
const Origin = Type.Object(
  { asn: Type.Integer({ description: 'an origin AS' }), name: Name('its registry as-name, or null') },
  { ...closed, description: 'an origin of the prefix' },
);
const localizationFields = {
  zone: Type.Union(
    ['near', 'origin', 'path', 'moas'].map((z) => Type.Literal(z)),
    { description: '`near`, `origin`, `path` or `moas`' },
  ),
  confidence: Type.Number({ minimum: 0, maximum: 1, description: '0 to 1' }),
  culprit_asn: Nullable(Type.Integer(), 'near: the peer AS of the entry session; origin: the origin AS; else null'),
  culprit_name: Name("the culprit's registry as-name, or null"),
  culprit_edge: Nullable(Type.Array(Type.Integer(), { minItems: 2, maxItems: 2 }), 'path only: [A, B], A nearer to us'),
  representative_path: Type.Array(Type.Integer(), { description: 'ASNs from near to origin, prepends collapsed' }),
  signals: Type.Object(
    {
      separation: Type.Number({ minimum: 0, maximum: 1, description: "the strongest (node, peer AS) direction's share of the summed scores" }),
      withdrawal_ratio: Nullable(Type.Number({ minimum: 0, maximum: 1 }), 'withdrawals / (announcements + withdrawals); null without counts'),
      flap_nodes: Type.Array(Type.String(), { description: 'the nodes that see the prefix flap' }),
      origins: Nullable(Type.Array(Origin), "moas only (equals the row's origins); else null"),
      session_flapping: Nullable(Type.Boolean(), 'near only; else null'),
      session_score: Nullable(Type.Number(), 'near only (null also without a session record)'),
    },
    { ...closed, description: 'what the localisation rests on' },
  ),
};
const Localization = Nullable(
  Type.Object(localizationFields, {
    ...closed,
    description: "the prefix's culprit localisation (docs/flap-localization.md); null when not locatable, never partial",
  }),
  "the prefix's culprit localisation; null when not locatable, never partial",
);
const Prefix = Type.String({ description: 'the prefix' });
const Moas = Type.Boolean({ description: 'the same prefix resolves to different origins across peer directions' });

export const FlatRow = component(
  'PrefixFlapDirection',
  Type.Object({ prefix: Prefix, ...direction, moas: Moas, localization: Localization }, { ...closed, description: 'a (prefix, peer_asn) prefix flap row' }),
);
const PrefixRow = component(
  'PrefixFlapRow',
  Type.Object(
    {
      prefix: Prefix,
      peer_asn: direction.peer_asn,
      peer_name: direction.peer_name,
      origin_asn: direction.origin_asn,
      origin_name: direction.origin_name,
      moas: Moas,
      origins: Type.Array(Origin, { description: 'the origins of the prefix' }),
      peer_count: Type.Integer({ description: 'peer directions of the prefix' }),
      ...strength,
      peers: Type.Array(Type.Object(direction, closed), { description: 'the peer directions of the prefix' }),
      localization: Localization,
    },
    { ...closed, description: 'a prefix flap row with its peer directions (group=prefix; document 3, "Prefix flap row")' },
  ),
);
const Feed = Type.Object(
  {
    node_id: Type.String({ description: 'the node' }),
    feed_state: Type.Union(
      ['established', 'down', 'stale', 'unknown'].map((s) => Type.Literal(s)),
      { description: '`established`, `down` (feed BGP session down), `stale` (no report for over 5 minutes) or `unknown` (just started)' },
    ),
    captured_at: Type.String({ description: "when the node's latest report was captured" }),
    total_changes: Nullable(
      Type.Integer(),
      'every change the collector saw between its last two reports, prefixes outside the top N included; null when not reported',
    ),
  },
  { ...closed, description: "a node's route-collector feed" },
);
const Summary = Type.Object(
  {
    near: Type.Integer({ description: 'prefixes located near us' }),
    origin: Type.Integer({ description: 'prefixes located at their origin' }),
    path: Type.Integer({ description: 'prefixes located on the path' }),
    moas: Type.Integer({ description: 'prefixes with several origins' }),
  },
  { ...closed, description: 'localisation counts over all prefixes, truncated ones included' },
);
const common = {
  generated_at: Type.String({ description: 'when the answer was made' }),
  feeds: Type.Array(Feed, { description: "the nodes' route-collector feeds" }),
  localization_summary: Summary,
};
/** The answer of `/ui/fleet/prefix-flaps` (and of the portal's `/autopeering/fleet/prefix-flaps`, whose allow-list keeps every field). */
export const PrefixFlaps = Type.Union([
  Type.Object({ rows: Type.Array(FlatRow), ...common }, closed),
  component(
    'PrefixFlapsByPrefix',
    Type.Object(
      { prefixes: Type.Array(PrefixRow, { description: 'one row a prefix with its peer directions; `limit` counts them' }), ...common },
      { ...closed, description: 'the prefix-first form (group=prefix)' },
    ),
  ),
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
