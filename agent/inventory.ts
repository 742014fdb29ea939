import { existsSync, readFileSync } from 'node:fs';
import { arch, hostname, platform, release } from 'node:os';
import { findExecutable } from './exec.js';
import type { Inventory } from '../domain/agent/registration.js';
import type { AgentCommands } from './runtime.js';
import type { WireguardKind } from './wireguard/implementation.js';

/** The inventory of `POST /agent/register`: the type the server records, so both sides agree on its fields. */
export type { Inventory };

const ARCH: Record<string, string> = { x64: 'x86_64', arm64: 'aarch64', arm: 'armv7l', ia32: 'i686' };

/** `debian-12` from /etc/os-release (ID and VERSION_ID), else the kernel's platform and release. */
export function osName(osRelease = '/etc/os-release'): string {
  try {
    const fields = Object.fromEntries(
      readFileSync(osRelease, 'utf8')
        .split('\n')
        .map((line) => /^([A-Z_]+)=("?)(.*)\2$/.exec(line.trim()))
        .filter((m): m is RegExpExecArray => m !== null)
        .map((m) => [m[1], m[3]]),
    );
    if (fields.ID) return fields.VERSION_ID ? `${fields.ID}-${fields.VERSION_ID}` : fields.ID;
  } catch {
    // no os-release: not a systemd-era Linux
  }
  return `${platform()}-${release()}`;
}

/**
 * What this machine can do, named by the tools found: `bird` (bird and birdc),
 * `wireguard` (wg and ip) with the implementation in use, `wireguard-kernel` or
 * `wireguard-userspace` (`wireguard-go`), when the agent resolved one, `dns`
 * (rndc), and the probe tools `ping`, `mtr`, `traceroute`. The server shows
 * them; the agent still checks each tool when it runs it.
 */
export function capabilities(commands: AgentCommands, has = (p: string) => findExecutable(p) !== null, wireguard: WireguardKind | null = null): string[] {
  const all = (...argvs: string[][]) => argvs.every((argv) => has(argv[0]));
  const found: string[] = [];
  if (all(commands.bird, commands.birdc)) found.push('bird');
  if (all(commands.wg, commands.ip)) {
    found.push('wireguard');
    if (wireguard) found.push(`wireguard-${wireguard}`);
  }
  if (all(commands.rndc)) found.push('dns');
  for (const probe of ['ping', 'mtr', 'traceroute']) if (has(probe)) found.push(probe);
  return found;
}

export function inventory(commands: AgentCommands, hostnameOverride: string | null, wireguard: WireguardKind | null = null): Inventory {
  return {
    hostname: hostnameOverride ?? hostname(),
    os: osName(),
    arch: ARCH[arch()] ?? arch(),
    has_systemd: existsSync('/run/systemd/system'),
    capabilities: capabilities(commands, undefined, wireguard),
  };
}
