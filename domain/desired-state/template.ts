import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { Validation, type FieldError } from '../errors.js';
import { HostSchema, MATERIALIZATION_FAILED, RPKI_MODES, desiredStateAjv, toFieldErrors } from './schema.js';

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

const check = desiredStateAjv().compile<BaseTemplate>(BaseTemplateSchema);

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

/** The node's template, checked; a template of the wrong shape cannot be materialised (422). */
export function readBaseTemplate(template: unknown): BaseTemplate {
  const errors = baseTemplateErrors(template);
  if (errors.length > 0) throw new Validation(MATERIALIZATION_FAILED, errors);
  return (template ?? {}) as BaseTemplate;
}

export interface PortRange {
  start: number;
  end: number;
}

/** One of the accepted range shapes as `{start, end}`, or null when it is none of them. */
export function parsePortRange(value: unknown): PortRange | null {
  let start: unknown;
  let end: unknown;
  if (typeof value === 'string') {
    const m = /^(\d{1,5})-(\d{1,5})$/.exec(value.trim());
    if (!m) return null;
    [start, end] = [Number(m[1]), Number(m[2])];
  } else if (Array.isArray(value) && value.length === 2) {
    [start, end] = value;
  } else if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    ({ start, end } = value as { start?: unknown; end?: unknown });
  }
  const port = (n: unknown): n is number => Number.isInteger(n) && (n as number) >= 1 && (n as number) <= 65535;
  return port(start) && port(end) && start <= end ? { start, end } : null;
}
