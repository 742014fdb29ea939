import { readFileSync } from 'node:fs';
import { DEFAULT_COMMANDS, type AgentCommands } from './runtime.js';
import { HEARTBEAT_INTERVAL_SECONDS } from '../domain/agent/heartbeat.js';
import { WIREGUARD_IMPLEMENTATIONS, type WireguardSetting } from './wireguard/implementation.js';

/**
 * The agent's settings: every key of the configuration file, its default and its
 * parser in this one table (documented in agent/README.md). The file is JSON or
 * `key = value` lines; command-line flags override it. A bad value stops the
 * agent with a one-line message that names the key.
 */

export const MODES = ['apply', 'write-rendered', 'plan-only'] as const;
export type Mode = (typeof MODES)[number];

/** `--log-level` words (case-insensitive) and the pino level each one means. */
export const LOG_LEVELS: Record<string, 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal'> = {
  trace: 'trace',
  debug: 'debug',
  info: 'info',
  warn: 'warn',
  warning: 'warn',
  error: 'error',
  critical: 'fatal',
  fatal: 'fatal',
};

export class UsageError extends Error {
  override name = 'UsageError';
}

/** What the file may set (snake_case keys). Run verbs (`--once`, `--doctor`, ...) and `--desired-state` are command-line only. */
export interface FileSettings {
  controller_url?: string;
  enrollment_token?: string;
  requested_node_id?: string;
  hostname?: string;
  state_dir?: string;
  rendered_dir?: string;
  mode?: Mode;
  log_level?: string;
  bird_socket?: string;
  bird_config?: string;
  bird_kernel?: boolean;
  reconcile_interval_seconds?: number;
  heartbeat_interval_seconds?: number;
  routing_interval_seconds?: number;
  prefix_flaps_interval_seconds?: number;
  wireguard_implementation?: WireguardSetting;
  wireguard_socket_dir?: string;
  commands?: Partial<AgentCommands>;
}

export const DEFAULTS = {
  state_dir: '/var/lib/dn42-control',
  mode: 'apply' as Mode,
  log_level: 'info',
  /** Debian's bird2 control socket. */
  bird_socket: '/run/bird/bird.ctl',
  bird_kernel: true,
  /** Safety-net reconcile for doorbells dropped by a full queue or a broken socket. */
  reconcile_interval_seconds: 300,
  heartbeat_interval_seconds: HEARTBEAT_INTERVAL_SECONDS,
  /** Routing-table observation (`/agent/routing-table`): every 5 minutes. */
  routing_interval_seconds: 300,
  /** Prefix flap collection (one look at BIRD's BGP routes, one `/agent/prefix-flaps` report): document 3's "about every 60 s". */
  prefix_flaps_interval_seconds: 60,
  /** The kernel module when `ip link add … type wireguard` works, else `wireguard-go`. */
  wireguard_implementation: 'auto' as WireguardSetting,
  /** Where `wireguard-go` and `wg` keep the UAPI sockets (compiled into both). */
  wireguard_socket_dir: '/var/run/wireguard',
  commands: DEFAULT_COMMANDS,
};

/** The environment variable that sets `wireguard_implementation` (over the file, under the command line). */
export const WIREGUARD_IMPLEMENTATION_ENV = 'DN42_AGENT_WIREGUARD_IMPLEMENTATION';

type Parse = (value: unknown) => unknown;

const text: Parse = (v) => {
  if (typeof v !== 'string' || v.length === 0) throw new Error('must be a non-empty string');
  return v;
};
const seconds: Parse = (v) => {
  const n = typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : v;
  if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 1) throw new Error('must be a whole number of seconds (1 or more)');
  return n;
};
const bool: Parse = (v) => {
  if (typeof v === 'boolean') return v;
  if (v === 'true' || v === 'yes' || v === '1') return true;
  if (v === 'false' || v === 'no' || v === '0') return false;
  throw new Error('must be true or false');
};
const mode: Parse = (v) => {
  if (!(MODES as readonly unknown[]).includes(v)) throw new Error(`must be one of ${MODES.join(', ')}`);
  return v;
};
const logLevel: Parse = (v) => {
  if (typeof v !== 'string' || !(v.toLowerCase() in LOG_LEVELS)) throw new Error(`must be one of ${Object.keys(LOG_LEVELS).join(', ')}`);
  return v;
};
export const wireguardImplementation: Parse = (v) => {
  if (!(WIREGUARD_IMPLEMENTATIONS as readonly unknown[]).includes(v)) throw new Error(`must be one of ${WIREGUARD_IMPLEMENTATIONS.join(', ')}`);
  return v;
};
const argv: Parse = (v) => {
  const list = typeof v === 'string' ? v.trim().split(/\s+/) : v;
  if (!Array.isArray(list) || list.length === 0 || !list.every((x) => typeof x === 'string' && x.length > 0))
    throw new Error('must be a command (a string or a list of strings)');
  return list;
};

const KEYS: Record<Exclude<keyof FileSettings, 'commands'>, Parse> = {
  controller_url: text,
  enrollment_token: text,
  requested_node_id: text,
  hostname: text,
  state_dir: text,
  rendered_dir: text,
  mode,
  log_level: logLevel,
  bird_socket: text,
  bird_config: text,
  bird_kernel: bool,
  reconcile_interval_seconds: seconds,
  heartbeat_interval_seconds: seconds,
  routing_interval_seconds: seconds,
  prefix_flaps_interval_seconds: seconds,
  wireguard_implementation: wireguardImplementation,
  wireguard_socket_dir: text,
};

/** Reads and checks a configuration file; a missing file or a bad key is a `UsageError` naming it. */
export function readConfigFile(path: string): FileSettings {
  let raw: string;
  try {
    raw = readFileSync(path, 'utf8');
  } catch (err) {
    throw new UsageError(`cannot read config file ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  const entries = raw.trimStart().startsWith('{') ? jsonEntries(raw, path) : keyValueEntries(raw, path);
  return checkEntries(entries, path);
}

function jsonEntries(raw: string, path: string): [string, unknown][] {
  let doc: unknown;
  try {
    doc = JSON.parse(raw);
  } catch (err) {
    throw new UsageError(`config file ${path}: invalid JSON: ${(err as Error).message}`);
  }
  const entries = Object.entries(doc as Record<string, unknown>);
  const commands = entries.find(([k]) => k === 'commands')?.[1];
  if (commands === undefined) return entries;
  if (typeof commands !== 'object' || commands === null || Array.isArray(commands)) throw new UsageError(`config file ${path}: commands must be an object`);
  return [...entries.filter(([k]) => k !== 'commands'), ...Object.entries(commands).map(([k, v]): [string, unknown] => [`command.${k}`, v])];
}

/** `key = value` lines; `#` starts a comment line; values may be quoted. */
function keyValueEntries(raw: string, path: string): [string, unknown][] {
  const entries: [string, unknown][] = [];
  raw.split(/\r?\n/).forEach((line, i) => {
    const trimmed = line.trim();
    if (trimmed === '' || trimmed.startsWith('#')) return;
    const match = /^([A-Za-z0-9_.-]+)\s*=\s*(.*)$/.exec(trimmed);
    if (!match) throw new UsageError(`config file ${path} line ${i + 1}: expected key = value`);
    entries.push([match[1], match[2].replace(/^"(.*)"$/, '$1').replace(/^'(.*)'$/, '$1')]);
  });
  return entries;
}

function checkEntries(entries: [string, unknown][], path: string): FileSettings {
  const settings: Record<string, unknown> = {};
  const commands: Record<string, unknown> = {};
  for (const [key, value] of entries) {
    const command = /^command\.(.+)$/.exec(key)?.[1];
    const parse = command !== undefined ? (command in DEFAULT_COMMANDS ? argv : undefined) : KEYS[key as keyof typeof KEYS];
    if (!parse) throw new UsageError(`config file ${path}: unknown key ${key}`);
    try {
      if (command !== undefined) commands[command] = parse(value);
      else settings[key] = parse(value);
    } catch (err) {
      throw new UsageError(`config file ${path}: ${key} ${(err as Error).message}`);
    }
  }
  return Object.keys(commands).length > 0 ? { ...settings, commands: commands as Partial<AgentCommands> } : settings;
}

/**
 * The control server's API base: the URL as given when it already ends with the
 * route prefix (`/control/v1`, or the older `/api/v1`), else with `/control/v1`
 * appended. No trailing slash.
 */
export function apiBase(controllerUrl: string): string {
  let parsed: URL;
  try {
    parsed = new URL(controllerUrl);
  } catch {
    throw new UsageError(`invalid --controller-url ${controllerUrl}`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new UsageError(`invalid --controller-url ${controllerUrl}: must be http or https`);
  const base = `${parsed.origin}${parsed.pathname}`.replace(/\/+$/, '');
  return /\/(control|api)\/v1$/.test(base) ? base : `${base}/control/v1`;
}
