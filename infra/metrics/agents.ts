import { Counter, type Registry } from 'prom-client';
import type { DoorbellBroadcaster } from '../../domain/doorbell.js';
import type { Logger } from '../logger.js';
import { sampledGauge } from './sampled.js';

/** What the agent gauges read of a hub (`infra/agent-hub/hub.ts`). */
export interface WatchedHub extends DoorbellBroadcaster {
  connectionCount(): number;
  droppedTotal: number;
}

/**
 * The control service's agent channel: agents connected to this instance's
 * sockets, doorbell events sent to them by type, and events dropped on a full
 * queue. One per control app; each listening server's hub is watched while it runs.
 */
export class AgentMetrics {
  private readonly hubs = new Set<WatchedHub>();
  private readonly sent: Counter<'type'>;
  /** Drops of hubs no longer watched, so the counter never goes back. */
  private droppedBefore = 0;

  constructor(registry: Registry, log: Logger) {
    sampledGauge(registry, log, {
      name: 'dn42_agents_connected',
      help: 'agent WebSocket connections (WS /agent/ws/{node_id}) open on this instance',
      read: () => [{ labels: {}, value: [...this.hubs].reduce((n, hub) => n + hub.connectionCount(), 0) }],
    });
    this.sent = new Counter({
      name: 'dn42_agent_doorbells_sent_total',
      help: 'doorbell events queued to agent connections of this instance, by event type (one per connection reached)',
      labelNames: ['type'],
      registers: [registry],
    });
    const dropped = () => this.droppedBefore + [...this.hubs].reduce((n, hub) => n + hub.droppedTotal, 0);
    new Counter({
      name: 'dn42_agent_doorbells_dropped_total',
      help: 'doorbell events dropped because an agent connection had 64 events queued',
      registers: [registry],
      collect() {
        this.reset();
        this.inc(dropped());
      },
    });
  }

  /** Watches a hub while its server runs; the answer is the hub as the doorbell's broadcaster, counting what it sends. */
  watch(hub: WatchedHub): { broadcaster: DoorbellBroadcaster; unwatch(): void } {
    this.hubs.add(hub);
    return {
      broadcaster: {
        deliver: (event) => {
          const delivery = hub.deliver(event);
          if (delivery.delivered > 0) this.sent.inc({ type: event.type }, delivery.delivered);
          return delivery;
        },
      },
      unwatch: () => {
        if (this.hubs.delete(hub)) this.droppedBefore += hub.droppedTotal;
      },
    };
  }
}
