/**
 * The doorbell: after a generation commits, connected agents are told to pull.
 * The command layer rings it; the agent channel (WebSocket hub) delivers.
 */
export interface DoorbellEvent {
  type: 'desired_state_updated';
  node_id: string;
  generation: number;
  reason?: string;
}

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
