import { Type, type TSchema } from '@sinclair/typebox';
import { component } from '../../shared/routes.js';

/** Response pieces shared by the console views (OpenAPI descriptions; the builders define the values). */
export const Nullable = <T extends TSchema>(schema: T, description?: string) =>
  Type.Union([schema, Type.Null()], description === undefined ? {} : { description });
export const NullableString = Nullable(Type.String());
export const NullableInteger = Nullable(Type.Integer());
export const NullableNumber = Nullable(Type.Number());
export const Count = Type.Integer({ minimum: 0 });
export const Liveness = component(
  'Liveness',
  Type.Union([Type.Literal('online'), Type.Literal('stale'), Type.Literal('offline')], {
    description: 'agent liveness: online up to 75 s since the last heartbeat, stale up to 300 s, else offline',
  }),
);
export const Geo = component(
  'Geo',
  Nullable(
    Type.Object({
      lat: Type.Number({ description: 'latitude' }),
      lon: Type.Number({ description: 'longitude' }),
      city: Type.String({ description: 'city, in English' }),
      country: Type.String({ description: 'ISO 3166-1 alpha-2' }),
      region: { ...NullableInteger, description: "dn42 origin-region community number (the node's own region overrides the registry-derived one), or null" },
    }),
    'where a node is, or null as a whole',
  ),
);
export const AgentSummary = Type.Object({ online: Count, stale: Count, offline: Count, agents_behind: Count });
export const Rates = { rx_bytes_per_sec: NullableNumber, tx_bytes_per_sec: NullableNumber };
export const LinkPeering = Nullable(
  Type.Object({
    id: Type.Integer({ description: 'the peering record id' }),
    name: Type.String({ description: 'the peering name' }),
    remote_asn: Type.Integer({ description: 'the remote AS' }),
    remote_node_id: { ...NullableString, description: 'internal peerings: the node at the other end; null otherwise' },
    is_internal: Type.Boolean({ description: 'a peering between two nodes of the fleet' }),
  }),
);

/**
 * A row id a client sends (cursor or path): the ids are bigint, and a number
 * past 2^53 - 1 is no id JSON can have carried to the client; above it 422,
 * never the database's out-of-range error.
 */
export const RowId = (description?: string) => Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER, ...(description ? { description } : {}) });

/** A cursor-paged list's size (document 3: 1 to 500, default 100) and cursor. */
export const PageQuery = {
  limit: Type.Integer({ minimum: 1, maximum: 500, default: 100 }),
  before_id: Type.Optional(RowId('only entries with a smaller id (the last id of the previous page)')),
};

export const UNAUTHORIZED = { 401: 'missing or invalid token', 403: 'admin surface locked' };
export const TAGS = ['console'];
