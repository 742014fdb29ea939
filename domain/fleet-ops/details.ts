import type { NodeEvent } from '../node/events.js';

/**
 * What a fleet operation reports per record, in the `details` of its response:
 * every field it changes (or, in a dry run, would change) and every record it
 * had to leave alone, with the reason. The contract names `details` only.
 */
export type RecordKind = 'node' | 'peering' | 'interface' | 'bgp_session';

export interface FieldChange {
  node_id: string;
  kind: RecordKind;
  /** Record id; null for the node itself. */
  id: number | null;
  /** The record's name before the operation. */
  name: string;
  /** Dotted path inside the record (`name`, `spec.listen_port`, `spec.peer.endpoint`, `base_template`). */
  field: string;
  from: unknown;
  to: unknown;
}

export interface Skipped {
  node_id: string;
  kind: RecordKind;
  id: number | null;
  name: string;
  reason: string;
}

export interface OperationDetails {
  changes: FieldChange[];
  skipped: Skipped[];
}

/** The events one node gets from an operation, and what they mean. */
export interface NodeMigration {
  events: NodeEvent[];
  details: OperationDetails;
}

export const noDetails = (): OperationDetails => ({ changes: [], skipped: [] });

/** Details of several nodes, in node order. */
export function mergeDetails(parts: readonly OperationDetails[]): OperationDetails {
  return { changes: parts.flatMap((p) => p.changes), skipped: parts.flatMap((p) => p.skipped) };
}
