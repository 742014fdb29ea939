import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { describeOutcome, runCommand } from '../exec.js';
import type { AgentCommands, DeviceReport } from '../runtime.js';
import { resolveImplementation, type Resolution, type WireguardKind, type WireguardSetting } from './implementation.js';

export type { DeviceReport };
import { WireguardGoSupervisor, type ProcessReport } from './supervisor.js';

export interface WireguardDevicesOptions {
  setting: WireguardSetting;
  commands: AgentCommands;
  /** `wireguard-go`'s UAPI socket directory (`/var/run/wireguard`). */
  socketDir: string;
  /** `<state-dir>/wireguard-go`: pid files and output of the processes. */
  processDir: string;
  log: Logger;
}

/** One step's answer: null when done, else the reason it failed. */
type Outcome = string | null;

/**
 * Makes and removes the node's WireGuard devices with the implementation the
 * setting resolves to (resolved at the first use, and again after a failure,
 * so a module loaded later is found). The apply asks it for a device instead
 * of running `ip link add … type wireguard` itself; the rest of the apply
 * (`wg setconf`, addresses, MTU) is the same for both, as `wg` talks to
 * `wireguard-go`'s socket as to the kernel.
 */
export class WireguardDevices {
  private resolution: Resolution | null = null;
  readonly supervisor: WireguardGoSupervisor;
  /** Told when a `wireguard-go` that died runs again: its new device needs its addresses and peers again (the daemon applies). */
  onRestarted: (iface: string) => void = () => {};

  constructor(private readonly o: WireguardDevicesOptions) {
    this.supervisor = new WireguardGoSupervisor({
      command: o.commands.wireguard_go,
      socketDir: o.socketDir,
      stateDir: o.processDir,
      ip: o.commands.ip,
      log: o.log,
      onRestarted: (iface) => this.onRestarted(iface),
    });
  }

  /** The implementation in use (probed once; an unavailable one is probed again at the next call). */
  async resolve(): Promise<Resolution> {
    if (this.resolution?.kind) return this.resolution;
    this.resolution = await resolveImplementation(this.o.setting, this.o.commands);
    if (this.resolution.kind)
      this.o.log.info({ setting: this.o.setting, implementation: this.resolution.kind, detail: this.resolution.detail }, 'WireGuard implementation');
    return this.resolution;
  }

  /** The kind resolved so far, without probing; null before the first apply or when none is available. */
  current(): WireguardKind | null {
    return this.resolution?.kind ?? null;
  }

  private async deviceExists(iface: string): Promise<boolean> {
    return (await runCommand([...this.o.commands.ip, 'link', 'show', 'dev', iface], 10_000)).code === 0;
  }

  /**
   * A device for `iface`: kept when it is there and of the implementation in
   * use, else made. A kernel device where `wireguard-go` is in use (the
   * setting changed) is replaced, and so is a userspace one under the kernel.
   */
  async create(iface: string): Promise<Outcome> {
    const resolution = await this.resolve();
    if (!resolution.kind) return resolution.detail;
    const exists = await this.deviceExists(iface);
    const userspace = this.isUserspace(iface);
    if (resolution.kind === 'kernel') {
      if (exists && !userspace) return null;
      if (userspace) await this.supervisor.stop(iface);
      const argv = [...this.o.commands.ip, 'link', 'add', 'dev', iface, 'type', 'wireguard'];
      const outcome = await runCommand(argv, 30_000);
      return outcome.code === 0 ? null : describeOutcome(argv, outcome);
    }
    if (exists && !userspace && !(await this.supervisor.adopt(iface))) {
      this.o.log.warn({ interface: iface }, 'a WireGuard device of another implementation is replaced by wireguard-go');
      await runCommand([...this.o.commands.ip, 'link', 'del', 'dev', iface], 30_000);
    }
    const ensured = await this.supervisor.ensure(iface);
    return ensured.ok ? null : ensured.detail;
  }

  /** Removes the device of an interface that left the desired state: its process ends (taking the device) and any device left is deleted. */
  async remove(iface: string): Promise<Outcome> {
    await this.supervisor.stop(iface);
    if (!(await this.deviceExists(iface))) return null;
    const argv = [...this.o.commands.ip, 'link', 'del', 'dev', iface];
    const outcome = await runCommand(argv, 30_000);
    return outcome.code === 0 ? null : describeOutcome(argv, outcome);
  }

  /** After an agent restart: watch the processes the previous agent left for these interfaces, without touching them. */
  async adopt(ifaces: readonly string[]): Promise<void> {
    for (const iface of ifaces) await this.supervisor.adopt(iface);
  }

  /** A device is userspace when a `wireguard-go` of this agent runs it, or its UAPI socket is there. */
  isUserspace(iface: string): boolean {
    return this.supervisor.report(iface) !== null || existsSync(join(this.o.socketDir, `${iface}.sock`));
  }

  report(iface: string): DeviceReport {
    const process: ProcessReport | null = this.supervisor.report(iface);
    if (!this.isUserspace(iface)) return { implementation: 'kernel', restarts: null, last_exit: null, last_exit_at: null };
    return {
      implementation: 'userspace',
      restarts: process?.restarts ?? 0,
      last_exit: process?.last_exit ?? null,
      last_exit_at: process?.last_exit_at ?? null,
    };
  }

  close(): void {
    this.supervisor.close();
  }
}
