import type { Logger } from 'pino';
import type { DesiredState } from '../domain/desired-state/schema.js';

/**
 * What every part of the running agent shares: where the controller is, which
 * node this is, where its files live, and how to talk to the control server.
 * The CLI builds one (`agent/cli.ts`); the daemon, telemetry, probes, log
 * streaming and self-update only read it.
 */
export interface AgentRuntime {
  /** Control server base URL without a trailing slash, e.g. `https://control.example` (routes under `/agent`). */
  readonly controllerUrl: string;
  readonly nodeId: string;
  readonly stateDir: string;
  readonly renderedDir: string;
  /** This agent's version, `x.y.z`. */
  readonly version: string;
  readonly logger: Logger;
  /** Argv prefixes of the external programs, so tests can point `birdc` at their own socket. */
  readonly commands: AgentCommands;
  /**
   * One authenticated call (`Authorization: Bearer <agent token>`) to the control
   * server, `path` relative to the base URL (`/agent/runtime-snapshot`). Resolves
   * for every HTTP status (the caller decides); rejects only on network failure.
   */
  request<T = unknown>(
    method: 'GET' | 'POST',
    path: string,
    body?: unknown,
    headers?: Record<string, string>,
  ): Promise<{ status: number; body: T; etag?: string }>;
  /** The agent token, for WebSocket handshakes (`Authorization: Bearer`, never in the query). It changes when a refused token is renewed (`agent/token.ts`): read it per connection, never keep it. */
  agentToken(): string;
  /** The outcome of the latest reconcile, for heartbeats and reports. */
  applied(): AppliedState;
  /** How each WireGuard device is made (kernel or `wireguard-go`) and how its process fares; absent in runtimes without an apply (tests). */
  readonly wireguard?: { report(iface: string): DeviceReport };
}

export interface AppliedState {
  /** Generation whose files are in force; null before the first successful apply. */
  generation: number | null;
  /** Outcome of the latest apply attempt; null before the first. */
  status: 'ok' | 'failed' | null;
  /** The desired state of `generation`, null before the first successful apply. */
  desired: DesiredState | null;
  /** Failed apply attempts since the agent started. */
  failures: number;
}

export interface AgentCommands {
  bird: string[];
  birdc: string[];
  wg: string[];
  ip: string[];
  /** BIND 9 control (`rndc`), used to reload the DNS server. */
  rndc: string[];
  systemctl: string[];
  /** The userspace WireGuard (`wireguard_implementation` `userspace`, or `auto` without the kernel module); `-f <iface>` is appended. */
  wireguard_go: string[];
}

export const DEFAULT_COMMANDS: AgentCommands = {
  bird: ['bird'],
  birdc: ['birdc'],
  wg: ['wg'],
  ip: ['ip'],
  rndc: ['rndc'],
  systemctl: ['systemctl'],
  wireguard_go: ['wireguard-go'],
};

/** How a WireGuard device was made and, for `wireguard-go`, how its process fares: the runtime snapshot's per-interface fields. */
export interface DeviceReport {
  implementation: 'kernel' | 'userspace';
  /** Userspace only: restarts of its process since the agent started, and how the last one ended. */
  restarts: number | null;
  last_exit: string | null;
  last_exit_at: string | null;
}
