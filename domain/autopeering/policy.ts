import { Type, type Static, type TSchema } from '@sinclair/typebox';

/**
 * A node's autopeering policy (document 2, "autopeering policy"): whether the
 * portal offers the node, how it is dialled in, a manual seat cap, and the
 * display metadata of the portal's node list (document 3, NodeOffer).
 *
 * The policy lives in the node's own stream (`AutopeeringPolicySet`), so the
 * portal's provisioning decides against the same stream version as the node's
 * peerings: a policy change and a new request cannot pass each other.
 */

const Nullable = <T extends TSchema>(schema: T, description: string) => Type.Union([schema, Type.Null()], { description });

/** Where peers dial in: a DNS name or an IP literal, never `host:port` (the port comes from the pool). */
const EndpointHost = Type.Union(
  [Type.String({ format: 'hostname', minLength: 1, maxLength: 253 }), Type.String({ format: 'ipv4' }), Type.String({ format: 'ipv6' })],
  { description: 'DNS name or IP literal without port' },
);

/** The display metadata of the portal's node list (document 3, NodeOffer). */
const display = (what: string) => `display metadata of the portal's node list: ${what}`;

export const AutopeeringPolicySchema = Type.Object(
  {
    enabled: Type.Boolean({ description: 'false: the node is not offered and new submissions get 404; existing peerings stay' }),
    endpoint_host: Nullable(EndpointHost, 'DNS name or IP literal without port; null: the node cannot be dialled in'),
    max_sessions: Nullable(Type.Integer({ minimum: 0, maximum: 65535 }), 'manual cap; null: limited only by the port pool'),
    notes: Nullable(Type.String({ maxLength: 4096 }), 'operator notes, not shown in the portal'),
    region: Nullable(Type.String({ minLength: 1, maxLength: 64 }), 'display text, e.g. "Europe"'),
    country_code: Nullable(Type.String({ pattern: '^[A-Z]{2}$' }), 'ISO 3166-1 alpha-2'),
    description: Nullable(Type.String({ maxLength: 512 }), display('description')),
    bandwidth_mbps: Nullable(Type.Integer({ minimum: 1, maximum: 10_000_000 }), display('bandwidth in Mbit/s')),
    monthly_quota_gb: Nullable(Type.Integer({ minimum: 0, maximum: 1_000_000_000 }), display('monthly quota in GB')),
    notice: Nullable(Type.String({ maxLength: 1024 }), 'shown to peers in the portal'),
  },
  { additionalProperties: false },
);
export type AutopeeringPolicy = Static<typeof AutopeeringPolicySchema>;

/** Bodies of PUT (omitted fields return to their defaults) and PATCH (omitted fields stay). */
export const AutopeeringPolicyInSchema = Type.Partial(AutopeeringPolicySchema, { additionalProperties: false });
export type AutopeeringPolicyIn = Static<typeof AutopeeringPolicyInSchema>;

/**
 * The policy of a node nobody configured: closed (fail closed: a node is offered
 * only once an operator opens it), no dial-in host, no cap, no metadata.
 */
export const DEFAULT_AUTOPEERING_POLICY: Readonly<AutopeeringPolicy> = Object.freeze({
  enabled: false,
  endpoint_host: null,
  max_sessions: null,
  notes: null,
  region: null,
  country_code: null,
  description: null,
  bandwidth_mbps: null,
  monthly_quota_gb: null,
  notice: null,
});

/** PUT: the given fields over the defaults. */
export function replacedPolicy(input: AutopeeringPolicyIn): AutopeeringPolicy {
  return { ...DEFAULT_AUTOPEERING_POLICY, ...input };
}

/** PATCH: the given fields over the current policy. */
export function patchedPolicy(current: AutopeeringPolicy, patch: AutopeeringPolicyIn): AutopeeringPolicy {
  return { ...current, ...patch };
}

/** Field-by-field equality in the schema's key order (the stored policy always has every key). */
export function samePolicy(a: AutopeeringPolicy, b: AutopeeringPolicy): boolean {
  return (Object.keys(DEFAULT_AUTOPEERING_POLICY) as (keyof AutopeeringPolicy)[]).every((k) => a[k] === b[k]);
}
