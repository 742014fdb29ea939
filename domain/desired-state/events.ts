import type { DomainEvent } from '../decider.js';

/**
 * A new generation of a node's desired state, in the `desired-state-<node_id>`
 * stream. The stream's version numbers the generations (generation = version + 1),
 * so the event store's expected-version check keeps them consecutive.
 */
export type DesiredStatePublished = DomainEvent<
  'DesiredStatePublished',
  {
    node_id: string;
    generation: number;
    reason: string;
    state: Record<string, unknown>;
    /** Set on a rollback: the generation whose snapshot was re-published. */
    rollback_of?: number;
  }
>;

export const desiredStateStream = (nodeId: string): string => `desired-state-${nodeId}`;
export const generationOfVersion = (version: number): number => version + 1;
