import { canonicalPrefix } from '../net/ip.js';
import { Validation } from '../errors.js';

/**
 * Prefix blocks live in `base_template.bird.blocked_prefixes` of each node
 * (exact-match reject on eBGP import). A block adds the canonical prefix to
 * the list; an unblock removes every entry equal to it in canonical form, and
 * when that empties the list the key goes (and an emptied `bird` with it), so
 * block then unblock returns the template to exactly what it was. Entries the
 * operator wrote in another form are kept as written.
 */

/** The prefix in canonical form (network address, RFC 5952), or 422 `invalid prefix: <input>`. */
export function blockablePrefix(input: string): string {
  const canonical = canonicalPrefix(input);
  if (canonical === null)
    throw new Validation(`invalid prefix: ${input}`, [
      { loc: ['body', 'prefix'], msg: 'expected an IPv4 or IPv6 prefix (address/length)', type: 'value_error' },
    ]);
  return canonical;
}

type Template = Record<string, unknown>;
type Bird = Record<string, unknown> & { blocked_prefixes?: unknown };

const birdOf = (template: Template | undefined): Bird | undefined => {
  const bird = template?.bird;
  return bird !== null && typeof bird === 'object' && !Array.isArray(bird) ? (bird as Bird) : undefined;
};
const listOf = (bird: Bird | undefined): string[] => (Array.isArray(bird?.blocked_prefixes) ? (bird.blocked_prefixes as string[]) : []);
const same = (prefix: string) => (entry: string) => (canonicalPrefix(entry) ?? entry) === prefix;

/** Whether the template blocks `prefix` (canonical). */
export function blocks(template: Template | undefined, prefix: string): boolean {
  return listOf(birdOf(template)).some(same(prefix));
}

/** Every prefix the template blocks, canonical. */
export function blockedBy(template: Template | undefined): string[] {
  return [...new Set(listOf(birdOf(template)).map((p) => canonicalPrefix(p) ?? p))];
}

/** The template with `prefix` blocked; undefined when it already is. */
export function withBlock(template: Template | undefined, prefix: string): Template | undefined {
  if (blocks(template, prefix)) return undefined;
  const bird = birdOf(template);
  return { ...template, bird: { ...bird, blocked_prefixes: [...listOf(bird), prefix] } };
}

/** The template without `prefix`; undefined when it does not block it. */
export function withoutBlock(template: Template | undefined, prefix: string): Template | undefined {
  if (!template || !blocks(template, prefix)) return undefined;
  const bird = birdOf(template)!;
  const rest = listOf(bird).filter((entry) => !same(prefix)(entry));
  const { blocked_prefixes: _list, ...others } = bird;
  const nextBird = rest.length > 0 ? { ...bird, blocked_prefixes: rest } : others;
  if (Object.keys(nextBird).length > 0) return { ...template, bird: nextBird };
  const { bird: _bird, ...withoutBird } = template;
  return withoutBird;
}
