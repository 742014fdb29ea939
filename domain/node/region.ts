/**
 * A node's own dn42 region (the origin-region community number, 41..57) from
 * `labels.region`, written as an integer or a decimal string; anything else is
 * no region. One reading for every consumer: the desired state's `node.region`
 * (region community, cold-potato MED) and the public map and fleet (where it
 * overrides the city table) must never disagree about a node's region.
 */
export function dn42RegionOf(labels: Record<string, unknown> | null | undefined): number | null {
  const raw = labels?.region;
  const n = typeof raw === 'string' && /^\d+$/.test(raw) ? Number(raw) : raw;
  return typeof n === 'number' && Number.isInteger(n) && n >= 41 && n <= 57 ? n : null;
}
