import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Where a lab keeps what it made, and the record of it (`lab.json`) that
 * `status` and `down` read: processes by pid, namespaces, the database, the
 * servers' ports and the admin token. Written after every step, so a lab cut
 * short (Ctrl-C, a crash) can still be taken down.
 */

export const PROJECT_ROOT = fileURLToPath(new URL('../', import.meta.url));
/** Every path, namespace and process of the lab carries this word, so it (and only it) can be found and stopped. */
export const LAB_MARK = 'dn42lab';
export const DEFAULT_STATE_DIR = join(PROJECT_ROOT, '.data', LAB_MARK);
export const HUB_NS = `${LAB_MARK}-net`;

export type WireguardChoice = 'auto' | 'kernel' | 'userspace';
export type WireguardKind = 'kernel' | 'userspace';

export interface LabProcess {
  /** `control`, `relay-root`, `relay-n1`, `bird-n1`, `agent-n1`, `bird-p1`, `wg-p1`, ... */
  name: string;
  pid: number;
  log: string;
}

export interface LabNodeRecord {
  node_id: string;
  ns: string;
  index: number;
  public_ip: string;
  asn: number;
  router_id: string;
  loopback_ipv4: string;
  loopback_ipv6: string;
  ipv4_prefix: string;
  ipv6_prefix: string;
  dir: string;
  bird_socket: string;
  agent_config: string;
}

export interface LabPeerRecord {
  name: string;
  ns: string;
  index: number;
  public_ip: string;
  asn: number;
  mntner: string;
  node_id: string;
  ipv4_prefix: string;
  ipv6_prefix: string;
  dir: string;
  bird_socket: string;
  interface: string | null;
  request_id: number | null;
  protocols: string[];
  /** The portal's wg-quick `PostUp` lines, `%i` replaced. */
  post_up: string[];
}

export interface LabDatabase {
  /** `embedded`: under DATA_DIR, removed with the state dir; `external`: a database of its own on DATABASE_URL, dropped at `down`. */
  kind: 'embedded' | 'external';
  /** external only: the server URL (without the lab's database) and the database's name. */
  server_url?: string;
  name?: string;
}

export interface LabState {
  state_dir: string;
  started_at: string;
  nodes_wanted: number;
  peers_wanted: number;
  wireguard: WireguardKind;
  /** The servers' FLAP_TIME_SCALE (1: document 3's half-life). */
  flap_time_scale?: number;
  ports: { control: number; identity: number; registry: number; site: number };
  database: LabDatabase;
  admin_token: string | null;
  namespaces: string[];
  processes: LabProcess[];
  nodes: LabNodeRecord[];
  peers: LabPeerRecord[];
  /** Set once `up` has seen everything converge. */
  converged_s: number | null;
  /** `starting` while `up` runs; `up` after convergence; `failed` when `up` gave up. */
  phase: 'starting' | 'up' | 'failed';
}

export const stateFile = (stateDir: string) => join(stateDir, 'lab.json');

export function labPaths(stateDir: string) {
  const dir = resolve(stateDir);
  return {
    dir,
    file: stateFile(dir),
    logs: join(dir, 'logs'),
    bin: join(dir, 'bin'),
    data: join(dir, 'data'),
    registry: join(dir, 'registry'),
    controlSocket: join(dir, 'control.sock'),
    node: (id: string) => join(dir, 'nodes', id),
    peer: (name: string) => join(dir, 'peers', name),
  };
}

export function readState(stateDir: string): LabState | undefined {
  const file = stateFile(resolve(stateDir));
  if (!existsSync(file)) return undefined;
  return JSON.parse(readFileSync(file, 'utf8')) as LabState;
}

/** Replaces lab.json atomically (a reader never sees half a file). */
export function writeState(state: LabState): void {
  mkdirSync(state.state_dir, { recursive: true });
  const file = stateFile(state.state_dir);
  writeFileSync(`${file}.tmp`, `${JSON.stringify(state, null, 2)}\n`, { mode: 0o600 });
  renameSync(`${file}.tmp`, file);
}
