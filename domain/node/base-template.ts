import { Type, type Static, type TSchema } from '@sinclair/typebox';
import type { FieldError } from '../errors.js';
import { parsePortRange } from '../net/ports.js';
import { Fmt, IfName, addressAjv, toFieldErrors } from '../net/schema.js';

/**
 * The parts of a node's `base_template` that materialisation reads. Other keys are
 * left alone (the template is the operator's); the keys below must have these shapes.
 */

const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);
const Port = Type.Integer({ minimum: 1, maximum: 65535 });

/** `"51800-51830"`, `[51800, 51830]` or `{start: 51800, end: 51830}`; both ends inclusive. */
export const PortRangeSchema = Type.Union([
  Type.String({ pattern: '^\\d{1,5}-\\d{1,5}$' }),
  Type.Tuple([Port, Port]),
  Type.Object({ start: Port, end: Port }, { additionalProperties: false }),
]);
export type PortRangeInput = Static<typeof PortRangeSchema>;

/**
 * How the node treats RPKI (ROAs derived from the dn42 registry, handed out by
 * the control server): `reject_invalid` drops ROA-invalid routes on eBGP import
 * (the default, what dn42 peers expect), `observe` loads the ROA tables and
 * reports each route's state without dropping anything, `off` loads no ROA
 * table and reports no state.
 */
export const RPKI_MODES = ['reject_invalid', 'observe', 'off'] as const;
export type RpkiMode = (typeof RPKI_MODES)[number];
export const DEFAULT_RPKI_MODE: RpkiMode = 'reject_invalid';

/**
 * A machine behind this node that runs no BIRD (a service box, a container
 * bridge): the node installs a static route for each address via `interface`
 * and originates it into the fleet's IGP, so every router reaches it.
 */
export const HostSchema = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9][A-Za-z0-9._-]*$' }),
    addresses: Type.Array(Fmt('ip-interface'), { minItems: 1, maxItems: 16 }),
    interface: IfName,
  },
  { additionalProperties: false },
);

export const InternalTopologyTemplateSchema = Type.Object(
  {
    /** Node ids of iBGP neighbours beyond those the node's internal peerings already name. */
    routers: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { maxItems: 256 })),
    hosts: Type.Optional(Type.Array(HostSchema, { maxItems: 256 })),
  },
  { additionalProperties: false },
);

export const BaseTemplateSchema = Type.Object({
  runtime: Type.Optional(Type.Object({ wireguard_port_range: Type.Optional(PortRangeSchema) })),
  bird: Type.Optional(
    Type.Object({
      internal_topology: Type.Optional(InternalTopologyTemplateSchema),
      cold_potato_med: Type.Optional(Nullable(Type.Integer({ minimum: 0, maximum: 4294967295 }))),
      route_local_pref: Type.Optional(
        Type.Array(
          Type.Object(
            { prefix: Type.String({ format: 'ip-prefix' }), local_pref: Type.Integer({ minimum: 0, maximum: 4294967295 }) },
            { additionalProperties: false },
          ),
        ),
      ),
      blocked_prefixes: Type.Optional(Type.Array(Type.String({ format: 'ip-prefix' }))),
      /** RPKI policy (`reject_invalid` when absent). */
      rpki: Type.Optional(Type.Object({ mode: Type.Union(RPKI_MODES.map((m) => Type.Literal(m))) }, { additionalProperties: false })),
      /** Default import limit of eBGP sessions that set none (8500). */
      import_limit: Type.Optional(Type.Integer({ minimum: 1 })),
    }),
  ),
});
export type BaseTemplate = Static<typeof BaseTemplateSchema>;

const check = addressAjv().compile<BaseTemplate>(BaseTemplateSchema);

/** Field errors of a base template, located under `root` (e.g. `['body', 'base_template']`). */
export function baseTemplateErrors(template: unknown, root: (string | number)[] = ['node', 'base_template']): FieldError[] {
  if (template === undefined || template === null) return [];
  if (!check(template)) return toFieldErrors(root, check.errors);
  const range = template.runtime?.wireguard_port_range;
  if (range !== undefined && parsePortRange(range) === null) {
    return [{ loc: [...root, 'runtime', 'wireguard_port_range'], msg: 'expected start <= end, both 1..65535', type: 'range' }];
  }
  return [];
}
