import type { ReleaseFile } from './release/manifest.js';

/**
 * The doorbell: after a write commits, connected agents are told about it.
 * The command layer rings it; the agent channel (WebSocket hub) delivers,
 * on this instance directly and on the others through PostgreSQL NOTIFY.
 *
 * Every event names the node it is for; on the wire (`WS /agent/ws/{node_id}`)
 * `node_id` is dropped, the rest is the contract's event (document 2, Events).
 */
export type DoorbellEvent =
  | { type: 'desired_state_updated'; node_id: string; generation: number; reason?: string }
  | { type: 'snapshot_request'; node_id: string; reason?: string }
  | { type: 'agent_update_available'; node_id: string; version: string; wheels: ReleaseFile[]; reason?: string }
  | { type: 'probe_request'; node_id: string; probe_id: string; spec: Record<string, unknown> }
  | { type: 'log_request'; node_id: string; log_id: string; spec: Record<string, unknown> };

/** How many agent connections of the node there were and how many took the event. */
export interface Delivery {
  node_id: string;
  subscribers: number;
  delivered: number;
}

export interface Doorbell {
  /** Rings for events that have committed. Never throws: a lost doorbell costs one reconcile period. */
  ring(events: readonly DoorbellEvent[]): Promise<Delivery[]>;
}

/**
 * Hands an event to this process's agent connections. The agent channel
 * implements it with WebSockets; until then, nobody is connected.
 */
export interface DoorbellBroadcaster {
  deliver(event: DoorbellEvent): Delivery;
}

export const nobodyConnected: DoorbellBroadcaster = {
  deliver: (event) => ({ node_id: event.node_id, subscribers: 0, delivered: 0 }),
};
