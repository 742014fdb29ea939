import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { freePort } from '../../support/ports.js';
import { spawnBird, type BirdProcess } from './bird-process.js';

/**
 * Two real BIRD 2 daemons on loopback, each with its own control socket,
 * peering over eBGP (IPv4 on 127.0.0.1/127.0.0.2 and IPv6 on ::1), plus a
 * session that never connects and a disabled one: the protocol states a
 * runtime snapshot has to read. No kernel protocol, so nothing touches the
 * host's routes.
 */
export interface BirdPair {
  /** `birdc` argv prefix of node A (the one with four BGP protocols). */
  birdcA: string[];
  /** `birdc` argv prefix of node B (announces 172.21.0.0/24 from static `s4`, fd42:2::/48 and fd42:3::/48 from `s6`). */
  birdcB: string[];
  /** Stops both daemons and waits for them to exit; stopping again does nothing. */
  stop(): Promise<void>;
}

export async function startBirdPair(dir: string): Promise<BirdPair> {
  const [pa, pb] = [await freePort(), await freePort()];
  const statics = (v4: string[], v6: string[]) =>
    `protocol device {}\nprotocol static s4 { ipv4; ${v4.map((r) => `route ${r} blackhole;`).join(' ')} }\nprotocol static s6 { ipv6; ${v6.map((r) => `route ${r} blackhole;`).join(' ')} }\n`;
  const a = `router id 172.20.0.1;
${statics(['172.20.1.0/24', '172.20.2.0/24'], ['fd42:1::/48'])}
protocol bgp peer_b { local 127.0.0.1 port ${pa} as 4242420001; neighbor 127.0.0.2 port ${pb} as 4242420002; multihop; ipv4 { import all; export all; next hop self; }; }
protocol bgp peer_b6 { local ::1 port ${pa} as 4242420001; neighbor ::1 port ${pb} as 4242420002; multihop; ipv6 { import all; export all; next hop address fd42:99::1; }; }
protocol bgp dn42_down { local 127.0.0.1 as 4242420001; neighbor 127.0.0.9 port ${await freePort()} as 4242420099; multihop; ipv4 { import all; export none; }; }
protocol bgp dn42_off { disabled; local 127.0.0.1 as 4242420001; neighbor 127.0.0.10 as 4242420010; ipv6 { import all; export none; }; }
`;
  const b = `router id 172.20.0.2;
timeformat protocol iso long;
${statics(['172.21.0.0/24'], ['fd42:2::/48', 'fd42:3::/48'])}
protocol bgp peer_a { local 127.0.0.2 port ${pb} as 4242420002; neighbor 127.0.0.1 port ${pa} as 4242420001; multihop;
  ipv4 { import filter { if net = 172.20.2.0/24 then reject; accept; }; import keep filtered on; export all; next hop self; }; }
protocol bgp peer_a6 { local ::1 port ${pb} as 4242420002; neighbor ::1 port ${pa} as 4242420001; multihop; ipv6 { import all; export all; next hop address fd42:98::1; }; }
`;
  const daemons: BirdProcess[] = [];
  try {
    for (const [name, conf] of [
      ['a', a],
      ['b', b],
    ] as const) {
      await writeFile(join(dir, `${name}.conf`), conf);
      daemons.push(await spawnBird(join(dir, `${name}.conf`), join(dir, `${name}.ctl`)));
    }
  } catch (err) {
    await Promise.all(daemons.map((d) => d.stop()));
    throw err;
  }
  return {
    birdcA: ['birdc', '-s', daemons[0].socket],
    birdcB: ['birdc', '-s', daemons[1].socket],
    stop: async () => {
      await Promise.all(daemons.map((d) => d.stop()));
    },
  };
}
