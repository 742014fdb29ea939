import { isDeepStrictEqual } from 'node:util';
import { Type, type Static } from '@sinclair/typebox';
import { Validation, type FieldError } from '../errors.js';
import { canonicalPrefix } from '../net/ip.js';
import type { BaseTemplate } from '../node/base-template.js';

/**
 * Route tuning of a node (`/ui/nodes/{id}/route-tuning`): the cold-potato MED and
 * the local preferences by prefix, which live in `base_template.bird` next to keys
 * this view does not own (`internal_topology`, `blocked_prefixes`, ...).
 */

const Unsigned32 = Type.Integer({ minimum: 0, maximum: 4294967295 });

/** At most this many local-preference rules per node. */
export const MAX_LOCAL_PREF_RULES = 256;

export const LocalPrefRuleSchema = Type.Object(
  { prefix: Type.String({ minLength: 1, maxLength: 64 }), local_pref: Unsigned32 },
  { additionalProperties: false },
);
export type LocalPrefRule = Static<typeof LocalPrefRuleSchema>;

/** The PUT body: each field optional; an omitted field is left as it is. */
export const RouteTuningPatchSchema = Type.Object(
  {
    cold_potato_med: Type.Optional(Type.Union([Unsigned32, Type.Null()], { description: 'null turns cold-potato routing off' })),
    route_local_pref: Type.Optional(
      Type.Array(LocalPrefRuleSchema, { maxItems: MAX_LOCAL_PREF_RULES, description: 'first match wins; [] removes every rule' }),
    ),
  },
  { additionalProperties: false },
);
export type RouteTuningPatch = Static<typeof RouteTuningPatchSchema>;

/** What the node runs: an absent MED is null, absent rules are [], prefixes canonical (as `materialise` writes them). */
export interface RouteTuning {
  cold_potato_med: number | null;
  route_local_pref: LocalPrefRule[];
}

type Template = Record<string, unknown>;

/** The route tuning a (written, hence valid) base template gives. */
export function routeTuningOf(template: Template): RouteTuning {
  const bird = (template as BaseTemplate).bird;
  return {
    cold_potato_med: bird?.cold_potato_med ?? null,
    route_local_pref: (bird?.route_local_pref ?? []).map((r) => ({ prefix: canonicalPrefix(r.prefix) ?? r.prefix, local_pref: r.local_pref })),
  };
}

/**
 * Merges a PUT into the template. Only fields whose effective value changes are
 * written (so repeating the current values, or clearing what is unset, changes
 * nothing); a field cleared to null or [] leaves `bird`, and an emptied `bird`
 * leaves the template. Throws 422 with one error per bad rule.
 */
export function mergeRouteTuning(template: Template, patch: RouteTuningPatch): { template: Template; changed: (keyof RouteTuning)[] } {
  const current = routeTuningOf(template);
  const next: RouteTuning = {
    cold_potato_med: patch.cold_potato_med === undefined ? current.cold_potato_med : patch.cold_potato_med,
    route_local_pref: patch.route_local_pref === undefined ? current.route_local_pref : checkedRules(patch.route_local_pref),
  };
  const changed = (Object.keys(next) as (keyof RouteTuning)[]).filter((key) => !isDeepStrictEqual(current[key], next[key]));
  if (changed.length === 0) return { template, changed };

  const bird: Record<string, unknown> = { ...((template as BaseTemplate).bird ?? {}) };
  for (const key of changed) {
    const value = next[key];
    if (value === null || (Array.isArray(value) && value.length === 0)) delete bird[key];
    else bird[key] = value;
  }
  const { bird: _old, ...rest } = template;
  return { template: Object.keys(bird).length > 0 ? { ...rest, bird } : rest, changed };
}

/** The rules with canonical prefixes; 422 naming each rule whose prefix is no prefix or repeats an earlier one (it could never match). */
function checkedRules(rules: readonly LocalPrefRule[]): LocalPrefRule[] {
  const errors: FieldError[] = [];
  const seen = new Map<string, number>();
  const canonical = rules.map((rule, i) => {
    const loc = ['body', 'route_local_pref', i, 'prefix'];
    const prefix = canonicalPrefix(rule.prefix);
    if (prefix === null) {
      errors.push({ loc, msg: 'must be an IP prefix (address/length)', type: 'value_error' });
      return rule;
    }
    const first = seen.get(prefix);
    if (first !== undefined) errors.push({ loc, msg: `repeats the prefix of rule ${first} (${prefix})`, type: 'unique' });
    else seen.set(prefix, i);
    return { prefix, local_pref: rule.local_pref };
  });
  if (errors.length > 0) throw new Validation('invalid route_local_pref', errors);
  return canonical;
}
