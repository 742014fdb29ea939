/** One record of a namespace (names unique per node) taking another name. */
export interface Rename {
  id: number;
  from: string;
  to: string;
}

/**
 * The renames of one namespace that can be applied one after another, each to a
 * name that is free at its turn, and those that cannot (the name stays held by a
 * record that keeps it, or two records want the same name: the lower id wins).
 * A rename that frees a name lets a later one take it, so `a→b, b→c` works in
 * the order `b→c, a→b`. Run to a fixpoint: what is blocked stays blocked on the
 * next run, so an operation built on this is idempotent.
 */
export function orderRenames(current: ReadonlyMap<number, string>, wanted: ReadonlyMap<number, string>): { applied: Rename[]; blocked: Rename[] } {
  const holder = new Map<string, number>();
  for (const [id, name] of current) holder.set(name, id);
  let pending: Rename[] = [...wanted]
    .filter(([id, to]) => current.has(id) && current.get(id) !== to)
    .sort(([a], [b]) => a - b)
    .map(([id, to]) => ({ id, from: current.get(id)!, to }));
  const applied: Rename[] = [];
  for (let progress = true; progress;) {
    progress = false;
    const waiting: Rename[] = [];
    for (const r of pending) {
      if (holder.has(r.to)) {
        waiting.push(r);
        continue;
      }
      holder.delete(r.from);
      holder.set(r.to, r.id);
      applied.push(r);
      progress = true;
    }
    pending = waiting;
  }
  return { applied, blocked: pending };
}
