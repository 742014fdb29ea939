import type { LogRing } from './logs/ring.js';
import { Backoff, sleep, WEBSOCKET_BACKOFF } from './backoff.js';
import { AgentChannel, type DoorbellEvent } from './channel.js';
import type { Mode } from './config.js';
import { TokenRefused } from './errors.js';
import type { ReconcileSummary } from './reconcile.js';
import type { AgentRuntime } from './runtime.js';
import { ensureKeyRegistered, type AgentSession } from './session.js';

/** Intervals of the daemon's telemetry loops that a configuration can set (the rest keep their defaults). */
export interface TelemetryIntervals {
  routingMs?: number;
  flapsMs?: number;
}

/** What agent-ops provides (agent/telemetry, agent/probes, agent/logs, agent/update); injected so the daemon can be tested alone. */
export interface DaemonServices {
  startTelemetry(rt: AgentRuntime, ring: LogRing, options?: TelemetryIntervals): { snapshotNow(reason?: string): Promise<void>; stop(): Promise<void> };
  runProbe(rt: AgentRuntime, probeId: string, spec: unknown, signal?: AbortSignal): Promise<void>;
  streamLogs(rt: AgentRuntime, ring: LogRing, logId: string, spec: unknown, signal?: AbortSignal): Promise<void>;
  checkForUpdate(rt: AgentRuntime, offer?: { version: string; wheels: unknown[]; reason?: string }): Promise<void>;
}

export interface DaemonOptions {
  mode: Mode;
  reconcileIntervalMs: number;
  heartbeatIntervalMs: number;
  /** Intervals of the routing-table and prefix-flap loops (default: the telemetry's 5 minutes and 60 s). */
  telemetry?: TelemetryIntervals;
  backoff?: Backoff;
}

/** The server's close code for an agent token it does not accept (revoked, rotated, expired). */
const CLOSE_UNAUTHORIZED = 4401;

/** Heartbeat `apply_status` in the apply-result's words. */
const APPLY_STATUS = { ok: 'succeeded', failed: 'failed' } as const;

/**
 * The long-lived agent: reconcile at start, then keep the WebSocket open and
 * reconcile on every `desired_state_updated`, on a `hello` that names another
 * generation than the one in force, and on a timer as the safety net for
 * dropped doorbells. Reconciles never overlap: a request during one runs once
 * more after it.
 */
export class Daemon {
  private readonly rt: AgentRuntime;
  private telemetry: ReturnType<DaemonServices['startTelemetry']> | null = null;
  private running: Promise<void> | null = null;
  private again = false;
  private force = false;
  private keyRegistered = false;
  private readonly jobs = new AbortController();
  private channel: AgentChannel | null = null;
  private readonly backoff: Backoff;

  constructor(
    private readonly session: AgentSession,
    private readonly ring: LogRing,
    private readonly services: DaemonServices,
    private readonly options: DaemonOptions,
  ) {
    if (!session.rt) throw new Error('the daemon needs a control server');
    this.rt = session.rt;
    this.backoff = options.backoff ?? new Backoff(WEBSOCKET_BACKOFF);
  }

  /** Runs until `signal` aborts, then stops timers, the socket, telemetry and jobs. */
  async run(signal: AbortSignal): Promise<void> {
    const devices = this.session.devices;
    if (devices) {
      // The processes a previous agent left run on: watched, not restarted (no tunnel is torn down).
      await devices.adopt(this.rt.applied().desired?.interfaces.map((i) => i.name) ?? []);
      devices.onRestarted = (iface) => void this.deviceRestarted(iface);
    }
    await this.requestReconcile('start');
    this.telemetry = this.services.startTelemetry(this.rt, this.ring, this.options.telemetry);
    void this.services.checkForUpdate(this.rt);
    const safety = setInterval(() => {
      void this.requestReconcile('periodic');
      void this.services.checkForUpdate(this.rt);
    }, this.options.reconcileIntervalMs);
    const heartbeat = setInterval(() => this.sendHeartbeat(), this.options.heartbeatIntervalMs);
    try {
      await this.keepConnected(signal);
    } finally {
      clearInterval(safety);
      clearInterval(heartbeat);
      this.jobs.abort();
      await this.running;
      devices?.close();
      await this.telemetry.stop();
      this.rt.logger.info('daemon stopped');
    }
  }

  /**
   * Connects, and after every close waits 1 s doubling to 30 s (plus jitter)
   * before the next try. The server's `hello` resets the delay (an open socket
   * alone does not: a refused token is closed with 4401 right after the
   * handshake). A 4401 asks for a renewed token first.
   */
  private async keepConnected(signal: AbortSignal): Promise<void> {
    const backoff = this.backoff;
    while (!signal.aborted) {
      const token = this.rt.agentToken();
      this.channel = new AgentChannel(this.rt, {
        onOpen: () => this.sendHeartbeat(),
        onEvent: (event) => this.onEvent(event),
      });
      const closed = await this.channel.run(signal);
      this.channel = null;
      if (signal.aborted) return;
      if (closed.code === CLOSE_UNAUTHORIZED && (await this.session.renewToken(token, 'socket'))) backoff.reset();
      const delay = backoff.next();
      this.rt.logger.warn({ code: closed.code, reason: closed.reason, retry_in_ms: delay }, 'agent channel closed; reconnecting');
      await sleep(delay, signal);
    }
  }

  private onEvent(event: DoorbellEvent): void {
    const rt = this.rt;
    switch (event.type) {
      case 'hello': {
        this.backoff.reset();
        const applied = rt.applied();
        if (event.generation !== undefined && (event.generation !== applied.generation || applied.status !== 'ok')) void this.requestReconcile('hello');
        return;
      }
      case 'desired_state_updated':
        void this.requestReconcile(`desired_state_updated ${event.generation}`);
        return;
      case 'snapshot_request':
        void this.telemetry?.snapshotNow('snapshot_request');
        return;
      case 'agent_update_available':
        void this.services.checkForUpdate(rt, { version: event.version, wheels: event.wheels ?? [], ...(event.reason ? { reason: event.reason } : {}) });
        return;
      case 'probe_request':
        void this.services.runProbe(rt, event.probe_id, event.spec, this.jobs.signal);
        return;
      case 'log_request':
        void this.services.streamLogs(rt, this.ring, event.log_id, event.spec, this.jobs.signal);
        return;
    }
  }

  /**
   * Reconciles now, or once more after the running reconcile; resolves when the
   * reconciles it caused are done. `force` applies even when the generation is
   * in force (a restarted `wireguard-go` has a bare device).
   */
  requestReconcile(reason: string, force = false): Promise<void> {
    if (force) this.force = true;
    if (this.running) {
      this.again = true;
      return this.running;
    }
    this.running = (async () => {
      try {
        do {
          this.again = false;
          const forced = this.force;
          this.force = false;
          await this.reconcileOnce(reason, forced);
        } while (this.again);
      } finally {
        this.running = null;
      }
    })();
    return this.running;
  }

  private async reconcileOnce(reason: string, force: boolean): Promise<void> {
    const log = this.rt.logger;
    let summary: ReconcileSummary;
    try {
      if (!this.keyRegistered) this.keyRegistered = await ensureKeyRegistered(this.session);
      summary = await this.session.reconciler.reconcile(this.options.mode, force);
    } catch (err) {
      if (err instanceof TokenRefused) {
        // A new token (rotated in the state dir, or re-enrolled): reconcile again with it.
        if (await this.session.renewToken(err.token, 'pull')) this.again = true;
        return;
      }
      log.error({ err, reason }, 'reconcile failed');
      return;
    }
    log.debug({ reason, generation: summary.generation, status: summary.status }, 'reconciled');
    if (summary.status === 'in_sync' || summary.status === 'no_desired_state') return;
    this.sendHeartbeat();
    void this.telemetry?.snapshotNow('apply');
  }

  /**
   * A restarted `wireguard-go` made a bare device: it gets its addresses and
   * peers again (after a running reconcile, which may have done it already),
   * and a snapshot tells the server. Should that fail, a full apply follows.
   */
  private async deviceRestarted(iface: string): Promise<void> {
    await this.running;
    if (!(await this.session.reconciler.reapplyDevice(iface))) await this.requestReconcile(`wireguard-go of ${iface} restarted`, true);
    void this.telemetry?.snapshotNow('wireguard-go restarted');
  }

  /** `{type: 'heartbeat', agent_version, applied_generation, apply_status}` on the open socket, if any. */
  private sendHeartbeat(): void {
    const applied = this.rt.applied();
    this.channel?.send({
      type: 'heartbeat',
      agent_version: this.rt.version,
      applied_generation: applied.generation,
      apply_status: applied.status === null ? null : APPLY_STATUS[applied.status],
    });
  }
}
