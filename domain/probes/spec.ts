import { Type, type Static } from '@sinclair/typebox';
import { Validation } from '../errors.js';
import { checkProbeTarget } from './targets.js';

/**
 * Probe and log-view specs (document 3, "Probes and logs"). The schemas validate
 * the request and describe it in OpenAPI; `probeSpec` and `logSpec` then apply the
 * rules a schema cannot say and fill the defaults, so the agent always receives a
 * complete spec.
 */

/** Linux interface names: at most 15 bytes (IFNAMSIZ - 1). A leading `-` could pass for an option of the tool. */
const INTERFACE = Type.String({ minLength: 1, maxLength: 15, pattern: '^[A-Za-z0-9_][A-Za-z0-9_.@-]*$' });

export const ProbeSpecInput = Type.Object(
  {
    tool: Type.Union([Type.Literal('ping'), Type.Literal('mtr'), Type.Literal('traceroute'), Type.Literal('mtu')], {
      description: '`mtu` is a DF ping bisection whose last line is `PMTU_PAYLOAD <n>` (0: nothing passes)',
    }),
    target: Type.String({ minLength: 1, maxLength: 64, description: 'IP literal in the dn42, private or link-local ranges' }),
    count: Type.Optional(Type.Integer({ minimum: 1, maximum: 30, default: 10 })),
    resolve: Type.Optional(Type.Boolean({ default: true, description: 'reverse DNS of hops' })),
    interface: Type.Optional(Type.Union([INTERFACE, Type.Null()], { default: null, description: 'scope for link-local targets; ignored (null) otherwise' })),
    max_size: Type.Optional(Type.Union([Type.Integer({ minimum: 1280, maximum: 9200 }), Type.Null()], { default: null, description: 'mtu upper bound' })),
  },
  { additionalProperties: false },
);

export const LogSpecInput = Type.Object(
  {
    mode: Type.Union([Type.Literal('snapshot'), Type.Literal('tail')]),
    source: Type.Union([Type.Literal('buffer'), Type.Literal('journal')], {
      description: '`buffer`: the in-process structured ring; `journal`: service-manager history (snapshot only)',
    }),
    lines: Type.Optional(Type.Integer({ minimum: 10, maximum: 2000, default: 200 })),
    min_level: Type.Optional(Type.Union([Type.Literal('DEBUG'), Type.Literal('INFO'), Type.Literal('WARNING'), Type.Literal('ERROR')], { default: 'DEBUG' })),
    contains: Type.Optional(
      Type.Union([Type.String({ maxLength: 200 }), Type.Null()], { default: null, description: 'case-insensitive substring of message or logger' }),
    ),
    duration_seconds: Type.Optional(
      Type.Union([Type.Integer({ minimum: 10, maximum: 600 }), Type.Null()], { default: 120, description: 'tail only; null for snapshots' }),
    ),
  },
  { additionalProperties: false },
);

export type ProbeSpecInput = Static<typeof ProbeSpecInput>;
export type LogSpecInput = Static<typeof LogSpecInput>;

export interface ProbeSpec {
  tool: ProbeSpecInput['tool'];
  target: string;
  count: number;
  resolve: boolean;
  interface: string | null;
  max_size: number | null;
}

export interface LogSpec {
  mode: LogSpecInput['mode'];
  source: LogSpecInput['source'];
  lines: number;
  min_level: NonNullable<LogSpecInput['min_level']>;
  contains: string | null;
  duration_seconds: number | null;
}

/** The complete probe spec, or Validation (422) `invalid target <x>`. */
export function probeSpec(input: ProbeSpecInput): ProbeSpec {
  const target = checkProbeTarget(input.target);
  if (!target.ok) throw new Validation(`invalid target ${input.target}`, [{ loc: ['body', 'spec', 'target'], msg: target.reason, type: 'target_range' }]);
  return {
    tool: input.tool,
    target: input.target,
    count: input.count ?? 10,
    resolve: input.resolve ?? true,
    interface: target.kind === 'link-local' ? (input.interface ?? null) : null,
    max_size: input.max_size ?? null,
  };
}

/** The complete log spec, or Validation (422) `invalid source journal` for a journal tail. */
export function logSpec(input: LogSpecInput): LogSpec {
  const tail = input.mode === 'tail';
  if (tail && input.source === 'journal') {
    throw new Validation('invalid source journal: tail supports only buffer', [
      { loc: ['body', 'spec', 'source'], msg: 'tail supports only buffer', type: 'source_mode' },
    ]);
  }
  return {
    mode: input.mode,
    source: input.source,
    lines: input.lines ?? 200,
    min_level: input.min_level ?? 'DEBUG',
    contains: input.contains || null,
    duration_seconds: tail ? (input.duration_seconds ?? 120) : null,
  };
}
