import type { Logger } from 'pino';
import type { AgentCommands } from '../runtime.js';
import type { WireguardDevices } from '../wireguard/devices.js';

/** One step of an apply as `apply-result` reports it. */
export interface StepResult {
  name: string;
  status: 'ok' | 'failed' | 'skipped';
  detail?: string | null;
}

/** What the apply steps run against. */
export interface ApplyTarget {
  commands: AgentCommands;
  renderedDir: string;
  /** The file `birdc configure` loads; null: the rendered `bird/bird.conf`. */
  birdConfig: string | null;
  log: Logger;
  /** Makes and removes WireGuard devices (kernel or `wireguard-go`); absent: `ip link add … type wireguard` as planned. */
  devices?: WireguardDevices;
}

/** Paths inside the rendered dir, as agent/render writes them. */
export const RENDERED = {
  bird: 'bird/bird.conf',
  wireguard: (iface: string) => `wireguard/${iface}.conf`,
} as const;
