// (n) The lab: a whole fleet in network namespaces (lab/), real BIRD, real
// agents, real WireGuard (`wireguard-go` where the kernel has no module).
// Measured: convergence of 3 and 6 nodes (seconds from the agents' start until
// every session is Established and every prefix is in every table; the 6-node
// figure against the 3-node one of the same run), the time from a peer's portal
// request to its Established session (the request's `created_at` to BIRD's
// `since` on the peer's side, both in this machine's clock), and the agent's and
// each `wireguard-go`'s resident memory and CPU per node over an idle window,
// against a bare `node` process idling beside them in the same run.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { bgpProtocols } from '../lab/converge.js';
import { startLab, type LabHandle } from '../lab/lab.js';
import { envInt, progress, ratio, report, round, type Benchmark } from './support.js';

/** Resident memory (KiB) and CPU ticks (user + system) of a process, from /proc. */
function usage(pid: number): { rssKib: number; ticks: number } | null {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { rssKib: Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0), ticks: Number(fields[11]) + Number(fields[12]) };
  } catch {
    return null;
  }
}

/** Clock ticks per second of /proc's CPU times (USER_HZ, 100 on Linux). */
const TICKS = 100;

/** BIRD's `since` (`HH:MM:SS[.fff]` today, or a date and time) as epoch milliseconds in this machine's zone. */
function sinceMs(since: string): number | null {
  const full = /^(\d{4}-\d{2}-\d{2})[ T](\d{2}:\d{2}:\d{2}(?:\.\d+)?)/.exec(since);
  if (full) return new Date(`${full[1]}T${full[2]}`).getTime();
  const time = /^(\d{2}:\d{2}:\d{2}(?:\.\d+)?)/.exec(since);
  if (!time) return null;
  const today = new Date();
  const pad = (n: number) => String(n).padStart(2, '0');
  return new Date(`${today.getFullYear()}-${pad(today.getMonth() + 1)}-${pad(today.getDate())}T${time[1]}`).getTime();
}

async function idleFigures(lab: LabHandle, seconds: number) {
  const bare = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)', 'dn42lab-bench-baseline'], { stdio: 'ignore' });
  try {
    const pids: { kind: 'agent' | 'wireguard-go'; pid: number }[] = [];
    for (const n of lab.nodes) {
      const agent = lab.agentPid(n.id);
      if (agent) pids.push({ kind: 'agent', pid: agent });
      for (const pid of Object.values(await lab.wireguardGoPids(n.id))) pids.push({ kind: 'wireguard-go', pid });
    }
    const before = new Map(pids.map((p) => [p.pid, usage(p.pid)]));
    const bareBefore = usage(bare.pid!);
    await new Promise((r) => setTimeout(r, seconds * 1000)); // the idle window being measured
    const bareAfter = usage(bare.pid!);
    const of = (kind: 'agent' | 'wireguard-go') => {
      const rows = pids
        .filter((p) => p.kind === kind)
        .map((p) => ({ a: before.get(p.pid), b: usage(p.pid) }))
        .filter((r) => r.a && r.b);
      const rss = rows.map((r) => r.b!.rssKib / 1024);
      const cpu = rows.map((r) => ((r.b!.ticks - r.a!.ticks) / TICKS / seconds) * 100);
      const mean = (xs: number[]) => (xs.length ? xs.reduce((x, y) => x + y, 0) / xs.length : 0);
      return { count: rows.length, rss_mib_mean: round(mean(rss), 1), rss_mib_max: round(Math.max(0, ...rss), 1), cpu_percent_mean: round(mean(cpu), 2) };
    };
    const bareRss = (bareAfter?.rssKib ?? 0) / 1024;
    const bareCpu = bareAfter && bareBefore ? ((bareAfter.ticks - bareBefore.ticks) / TICKS / seconds) * 100 : 0;
    const agent = of('agent');
    const wgGo = of('wireguard-go');
    return {
      idle_window_s: seconds,
      agent,
      wireguard_go: wgGo,
      wireguard_go_per_node: round(wgGo.count / lab.nodes.length, 1),
      bare_node_rss_mib: round(bareRss, 1),
      bare_node_cpu_percent: round(bareCpu, 2),
      // memory per agent against an idle bare Node.js process: the agent's own cost above the runtime
      agent_rss_vs_bare_node: ratio(agent.rss_mib_mean, bareRss),
    };
  } finally {
    bare.kill('SIGTERM');
  }
}

export const labBench: Benchmark = {
  name: 'lab',
  description:
    'the lab (namespaces, BIRD, agents, wireguard-go): convergence of 3 and 6 nodes, portal request to Established, idle agent and wireguard-go cost',
  async run() {
    const idleSeconds = envInt('BENCH_LAB_IDLE_SECONDS', 30);
    const say = (line: string) => progress(`lab: ${line}`);
    const three = await startLab({ nodes: 3, peers: 1, say });
    let threeFigures: Record<string, unknown>;
    try {
      const peer = three.peers[0];
      // The peer's own view of its request (the portal API answers the session's ASN only).
      const request = (await three.portal(peer.name).get(`/autopeering/requests/${peer.requestId}`)).body as { created_at?: string } | undefined;
      const protocols = (await bgpProtocols(peer.birdSocket)) ?? [];
      const established = protocols.filter((p) => peer.protocols.includes(p.name) && p.state === 'up').map((p) => sinceMs(p.since));
      const last = established.every((t) => t !== null) && established.length > 0 ? Math.max(...(established as number[])) : null;
      const portalToEstablished = request?.created_at && last !== null ? (last - Date.parse(request.created_at)) / 1000 : null;
      threeFigures = {
        converge_s: three.convergeS,
        wireguard: three.wireguard,
        portal_request_to_established_s: portalToEstablished === null ? null : round(portalToEstablished, 1),
      };
      say(`3 nodes converged in ${three.convergeS} s; idle window of ${idleSeconds} s`);
      Object.assign(threeFigures, { idle: await idleFigures(three, idleSeconds) });
    } finally {
      await three.down();
    }
    const six = await startLab({ nodes: 6, peers: 0, say });
    const sixConverge = six.convergeS;
    await six.down();
    report({
      bench: 'lab',
      nodes_3: threeFigures,
      nodes_6: { converge_s: sixConverge },
      // convergence of 6 nodes (15 internal links, full mesh) against 3 (3 links), same run
      converge_6_vs_3: ratio(sixConverge, three.convergeS),
    });
  },
};
