/**
 * What this process wrote last for each node, so that the node's next report is
 * written on it in one statement (issue 30): the routing table's hashes, the
 * snapshot's comparison base, the series counters, the prefix flap rows. An
 * entry is taken out before the write that uses it and set again once that
 * write has committed, so a failed write leaves nothing stale behind. One entry
 * per node reporting to this process, held until it ends.
 */
export class PerNode<T> {
  private readonly entries = new Map<string, T>();

  /** The node's entry, removed. */
  take(nodeId: string): T | undefined {
    const entry = this.entries.get(nodeId);
    this.entries.delete(nodeId);
    return entry;
  }

  set(nodeId: string, entry: T): void {
    this.entries.set(nodeId, entry);
  }
}
