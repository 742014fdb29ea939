import { Type } from '@sinclair/typebox';
import type { ServiceContext } from '../../../shared/context.js';
import { ApiRouter, component } from '../../../shared/routes.js';
import { NodeIdParams, nodeOr404 } from '../../fleet/common.js';
import { Count, NullableInteger, NullableNumber, NullableString, TAGS, UNAUTHORIZED } from '../schemas.js';
import { fleetSessionFlaps, nodeSessionFlaps, nodeSessionStatus, peeringIssues } from '../../shared/flap-sessions.js';

const SessionStatus = Type.Object(
  {
    name: Type.String({ description: 'BIRD protocol name' }),
    kind: Type.Union([Type.Literal('ebgp'), Type.Literal('ibgp')], { description: 'ibgp: a protocol named ibgp_ (an internal neighbour); ebgp otherwise' }),
    state: Type.String({ description: 'the BIRD protocol state as reported (Established, Active, ...)' }),
    health: Type.Union(
      ['up', 'connecting', 'down', 'unknown'].map((h) => Type.Literal(h)),
      { description: 'the state in one word: up (established), connecting, down, unknown' },
    ),
    since: { ...NullableString, description: 'since when the session is in its state, as BIRD reports it' },
    remote_asn: { ...NullableInteger, description: 'the neighbour AS; null when not reported' },
    routes_imported: { ...NullableInteger, description: 'routes imported from the neighbour; null when not reported' },
    routes_exported: { ...NullableInteger, description: 'routes exported to the neighbour; null when not reported' },
    info: { ...NullableString, description: "BIRD's info text (the last error, for one); null when none" },
    flapping: Type.Boolean({ description: 'flap_score >= 3' }),
    flap_score: Type.Union([Type.Number(), Type.Null()], {
      description: "decayed to now from each flap's captured_at (half-life 30 min); null: no flap record (never flapped); 0: recorded, decayed",
    }),
  },
  { description: 'BgpSessionStatus' },
);
const FlapFields = {
  node_id: Type.String({ description: 'the node of the session' }),
  transitions_total: { ...Count, description: 'recorded state transitions of the session' },
  flaps_total: { ...Count, description: 'recorded flaps of the session' },
  last_transition_at: { ...NullableString, description: 'the latest recorded transition; null: none recorded' },
};
const SessionFlapRow = component('SessionFlapRow', Type.Composite([SessionStatus, Type.Object(FlapFields)]));
const Transition = Type.Object({
  name: Type.String(),
  session: Type.String(),
  kind: Type.Union([Type.Literal('state'), Type.Literal('restart')]),
  from_state: Type.String(),
  to_state: Type.String(),
  captured_at: Type.String(),
});
const PeeringIssue = component(
  'PeeringIssue',
  Type.Composite([
    SessionFlapRow,
    Type.Object({
      issue: Type.Union([Type.Literal('flapping'), Type.Literal('down'), Type.Literal('connecting')], { description: 'why the session is listed' }),
    }),
  ]),
);
export const PeeringIssues = Type.Array(PeeringIssue, { description: 'flapping (by score), then down, then connecting; eBGP first within a class' });

const NO_REPORT = { 404: 'unknown node <id> / no runtime status reported for node <id>' };

/** Session-level flap views (document 3, "Observation and flap endpoints"). */
export function sessionFlapRoutes(ctx: ServiceContext): ApiRouter {
  const common = { method: 'get' as const, tags: TAGS, security: ['admin'] };
  return new ApiRouter('/control/v1')
    .route({
      ...common,
      path: '/ui/nodes/{node_id}/bgp-sessions/status',
      summary: 'BGP sessions (eBGP and iBGP) of the latest runtime snapshot with health, flapping and flap_score',
      params: NodeIdParams,
      responses: {
        200: Type.Object({ node_id: Type.String(), captured_at: Type.String(), received_at: Type.String(), sessions: Type.Array(SessionStatus) }),
        ...UNAUTHORIZED,
        ...NO_REPORT,
      },
      handler: async (req, res) => {
        const node = await nodeOr404(ctx, req.params.node_id);
        res.json(await nodeSessionStatus(ctx.pool, node.node_id, ctx.now()));
      },
    })
    .route({
      ...common,
      path: '/ui/nodes/{node_id}/bgp-flaps',
      summary: 'session flap rows of one node and its transitions, newest first',
      params: NodeIdParams,
      query: Type.Object({ transitions_limit: Type.Integer({ minimum: 1, maximum: 200, default: 50 }) }, { additionalProperties: false }),
      responses: {
        200: Type.Object({ node_id: Type.String(), captured_at: Type.String(), sessions: Type.Array(SessionFlapRow), transitions: Type.Array(Transition) }),
        ...UNAUTHORIZED,
        ...NO_REPORT,
        422: 'invalid parameter',
      },
      handler: async (req, res) => {
        const node = await nodeOr404(ctx, req.params.node_id);
        res.json(await nodeSessionFlaps(ctx.pool, node.node_id, req.validQuery.transitions_limit, ctx.now()));
      },
    })
    .route({
      ...common,
      path: '/ui/fleet/bgp-flaps',
      summary: 'session flap rows of the fleet with a score at least min_score, by score descending',
      query: Type.Object(
        { min_score: Type.Number({ minimum: 0, default: 0.05 }), limit: Type.Integer({ minimum: 1, maximum: 500, default: 100 }) },
        { additionalProperties: false },
      ),
      responses: {
        200: Type.Object({ generated_at: Type.String(), min_score: NullableNumber, sessions: Type.Array(SessionFlapRow) }),
        ...UNAUTHORIZED,
        422: 'invalid parameter',
      },
      handler: async (req, res) => {
        res.json(await fleetSessionFlaps(ctx.pool, req.validQuery, ctx.now()));
      },
    })
    .route({
      ...common,
      path: '/ui/fleet/peering-issues',
      summary: 'sessions not Established or flapping: flapping (by score), then down, then connecting; eBGP first within a class',
      responses: { 200: PeeringIssues, ...UNAUTHORIZED },
      handler: async (_req, res) => {
        res.json(await peeringIssues(ctx.pool, ctx.now()));
      },
    });
}
