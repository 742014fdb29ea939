import { attempt } from './exec.js';
import type { LabNodeRecord, LabPeerRecord, LabState } from './state.js';

/**
 * Whether the lab's network has converged, seen from the routers themselves:
 * `birdc show protocols` for the BGP sessions (iBGP between every pair of
 * nodes, per family; the portal sessions on both sides) and `birdc show route`
 * for the prefixes (every node's in every other node's and every peer's
 * table, every peer's in every node's and every other peer's).
 */

export interface BgpProtocol {
  name: string;
  state: string;
  since: string;
  info: string;
}

export interface Convergence {
  sessions_total: number;
  sessions_established: number;
  routes_ok: boolean;
  /** One sentence per thing that has not converged (empty when all has). */
  missing: string[];
}

/** The BGP protocols of a BIRD, as `show protocols` lists them. */
export async function bgpProtocols(socket: string): Promise<BgpProtocol[] | null> {
  const out = await attempt(['birdc', '-s', socket, 'show', 'protocols'], 10_000);
  if (out.code !== 0) return null;
  const rows: BgpProtocol[] = [];
  for (const line of out.stdout.split('\n')) {
    const cols = line.trim().split(/\s+/);
    if (cols[1] !== 'BGP') continue;
    // name proto table state since(1 or 2 words) info...
    const since = /^\d{2}:\d{2}:\d{2}/.test(cols[5] ?? '') ? `${cols[4]} ${cols[5]}` : cols[4];
    const info = cols.slice(since.includes(' ') ? 6 : 5).join(' ');
    rows.push({ name: cols[0], state: cols[3], since, info });
  }
  return rows;
}

/** How far two readings of one unbroken session's `since` may differ (`sameSince`). */
export const SINCE_JITTER_MS = 10;

/**
 * Whether two readings of a session's `since` name the same moment. BIRD prints
 * it from its monotonic clock converted to the wall clock at each `show`, so two
 * readings of one unbroken session can differ by a millisecond; a session that
 * restarted between them moved by far more than `SINCE_JITTER_MS`.
 */
export function sameSince(a: string, b: string): boolean {
  // The time of day only, compared round the clock: BIRD adds the date once the moment is not today, so
  // one reading before midnight and one after differ in form, not in moment.
  const at = (since: string) => {
    const m = /(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,3}))?$/.exec(since);
    return m ? ((Number(m[1]) * 60 + Number(m[2])) * 60 + Number(m[3])) * 1000 + Number((m[4] ?? '0').padEnd(3, '0')) : NaN;
  };
  const diff = Math.abs(at(a) - at(b));
  if (Number.isNaN(diff)) return a === b;
  return Math.min(diff, DAY_MS - diff) <= SINCE_JITTER_MS;
}
const DAY_MS = 86_400_000;

/** The networks in a BIRD's tables (`show route`, best and others alike). */
export async function networks(socket: string): Promise<Set<string> | null> {
  const out = await attempt(['birdc', '-s', socket, 'show', 'route'], 10_000);
  if (out.code !== 0) return null;
  const found = new Set<string>();
  for (const line of out.stdout.split('\n')) {
    const m = /^([0-9a-f:.]+\/\d+)\s/.exec(line);
    if (m) found.add(m[1]);
  }
  return found;
}

/** Sessions a converged lab has: per node 2 iBGP sessions (IPv4 and IPv6 loopbacks) with each other node, and each portal session on both ends. */
export const expectedSessions = (state: LabState) =>
  2 * state.nodes.length * (state.nodes.length - 1) + 2 * state.peers.reduce((n, p) => n + Math.max(1, p.protocols.length), 0);

export async function convergence(state: LabState): Promise<Convergence> {
  const missing: string[] = [];
  let total = 0;
  let established = 0;
  const routers: { name: string; socket: string; wants: string[] }[] = [
    ...state.nodes.map((n: LabNodeRecord) => ({
      name: n.node_id,
      socket: n.bird_socket,
      wants: [
        ...state.nodes.filter((m) => m !== n).flatMap((m) => [m.ipv4_prefix, m.ipv6_prefix]),
        ...state.peers.flatMap((p) => [p.ipv4_prefix, p.ipv6_prefix]),
      ],
    })),
    ...state.peers.map((p: LabPeerRecord) => ({
      name: p.name,
      socket: p.bird_socket,
      wants: [
        ...state.nodes.flatMap((m) => [m.ipv4_prefix, m.ipv6_prefix]),
        ...state.peers.filter((q) => q !== p).flatMap((q) => [q.ipv4_prefix, q.ipv6_prefix]),
      ],
    })),
  ];
  let routesOk = true;
  for (const r of routers) {
    const protocols = await bgpProtocols(r.socket);
    if (protocols === null) {
      missing.push(`${r.name}: BIRD does not answer on ${r.socket}`);
      routesOk = false;
      continue;
    }
    total += protocols.length;
    for (const p of protocols) {
      if (p.info.startsWith('Established')) established++;
      else missing.push(`${r.name}: BGP ${p.name} is ${p.state} ${p.info}`.trim());
    }
    const have = await networks(r.socket);
    const absent = r.wants.filter((w) => !have?.has(w));
    if (absent.length > 0) {
      routesOk = false;
      missing.push(`${r.name}: no route to ${absent.join(', ')}`);
    }
  }
  const expected = expectedSessions(state);
  if (total < expected) missing.push(`${expected - total} of ${expected} BGP sessions not configured yet`);
  return { sessions_total: Math.max(total, expected), sessions_established: established, routes_ok: routesOk, missing };
}
