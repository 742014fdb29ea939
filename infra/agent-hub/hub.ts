import { randomUUID } from 'node:crypto';
import type { WebSocket } from 'ws';
import type { Delivery, DoorbellBroadcaster, DoorbellEvent } from '../../domain/doorbell.js';
import type { Logger } from '../logger.js';
import { Presence } from './presence.js';

/** Document 2, Limits: each connection has an event queue of 64; when full, events are dropped. */
export const QUEUE_LIMIT = 64;

/** The event as the agent sees it: the node is the channel's, so `node_id` is dropped. */
export function wireEvent(event: DoorbellEvent): string {
  const { node_id: _node, ...rest } = event;
  return JSON.stringify(rest);
}

/**
 * One agent's `WS /agent/ws/{node_id}` connection and its event queue.
 *
 * The queue holds the events not yet handed to the kernel: those waiting for the
 * `hello` to go out first, plus the frames whose write has not completed (an
 * agent that stops reading fills its socket buffers, then this queue). At
 * QUEUE_LIMIT an event is dropped and counted; the agent's periodic reconcile
 * compensates.
 */
export class AgentConnection {
  readonly id = randomUUID();
  private readonly waiting: string[] = [];
  private inFlight = 0;
  private open = false;
  /** The presence insert of this connection, once started (a removal waits for it). */
  presenceAdded: Promise<void> | undefined;
  dropped = 0;

  constructor(
    readonly nodeId: string,
    private readonly ws: WebSocket,
  ) {}

  /** Whether frames can still be written (the close event may not have run yet). */
  get isOpen(): boolean {
    return this.ws.readyState === this.ws.OPEN;
  }

  get queued(): number {
    return this.waiting.length + this.inFlight;
  }

  /** Queues a frame; false when the queue is full (the frame is dropped). */
  enqueue(frame: string): boolean {
    if (this.queued >= QUEUE_LIMIT) {
      this.dropped++;
      return false;
    }
    if (this.open) this.write(frame);
    else this.waiting.push(frame);
    return true;
  }

  /** Sends `hello` ahead of everything queued meanwhile, then lets events through. */
  start(hello: string): void {
    this.write(hello);
    this.open = true;
    for (const frame of this.waiting.splice(0)) this.write(frame);
  }

  private write(frame: string): void {
    if (this.ws.readyState !== this.ws.OPEN) return;
    this.inFlight++;
    this.ws.send(frame, () => this.inFlight--);
  }
}

/**
 * This instance's agent connections, by node: the doorbell's broadcaster here.
 * Other instances' events arrive through the doorbell's NOTIFY and are delivered
 * the same way; presence rows make this instance's connections visible to them.
 */
export class AgentHub implements DoorbellBroadcaster {
  private readonly byNode = new Map<string, Set<AgentConnection>>();
  /** Events dropped because a connection's queue was full, since start. */
  droppedTotal = 0;
  readonly presence: Presence;

  constructor(
    presence: Presence,
    private readonly log: Logger,
  ) {
    this.presence = presence;
  }

  get instanceId(): string {
    return this.presence.instanceId;
  }

  connectionCount(nodeId?: string): number {
    if (nodeId !== undefined) return this.byNode.get(nodeId)?.size ?? 0;
    let n = 0;
    for (const set of this.byNode.values()) n += set.size;
    return n;
  }

  /** Adds the connection (it starts receiving events) and makes it visible to other instances. */
  async register(connection: AgentConnection): Promise<void> {
    let set = this.byNode.get(connection.nodeId);
    if (!set) this.byNode.set(connection.nodeId, (set = new Set()));
    set.add(connection);
    connection.presenceAdded = this.presence.add(connection.id, connection.nodeId);
    await connection.presenceAdded;
  }

  /**
   * Removes the connection and its presence row. Race: the agent may close while
   * its row is being inserted; a DELETE sent meanwhile could run before the
   * INSERT commits and the row would outlive the connection, so the removal
   * waits for the insert (whether it succeeded or not).
   */
  unregister(connection: AgentConnection): void {
    const set = this.byNode.get(connection.nodeId);
    if (!set?.delete(connection)) return;
    if (set.size === 0) this.byNode.delete(connection.nodeId);
    const added = connection.presenceAdded ?? Promise.resolve();
    added
      .catch(() => undefined) // the register's caller reports a failed insert
      .then(() => this.presence.remove(connection.id))
      .catch((err) => this.log.error({ err, node_id: connection.nodeId }, 'could not remove an agent presence row'));
  }

  deliver(event: DoorbellEvent): Delivery {
    const set = this.byNode.get(event.node_id);
    if (!set) return { node_id: event.node_id, subscribers: 0, delivered: 0 };
    const frame = wireEvent(event);
    let delivered = 0;
    for (const connection of set) {
      if (!connection.isOpen) continue; // closing: not delivered, not a full queue
      if (connection.enqueue(frame)) delivered++;
      else {
        this.droppedTotal++;
        this.log.warn(
          { node_id: event.node_id, event: event.type, dropped: connection.dropped, dropped_total: this.droppedTotal },
          'agent event queue full; event dropped',
        );
      }
    }
    return { node_id: event.node_id, subscribers: set.size, delivered };
  }
}

/** Delivers to several broadcasters (a test's recording one and the hub) and adds up their counts. */
export function fanOut(...broadcasters: DoorbellBroadcaster[]): DoorbellBroadcaster {
  return {
    deliver(event) {
      const total: Delivery = { node_id: event.node_id, subscribers: 0, delivered: 0 };
      for (const b of broadcasters) {
        const d = b.deliver(event);
        total.subscribers += d.subscribers;
        total.delivered += d.delivered;
      }
      return total;
    },
  };
}
