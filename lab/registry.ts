import { chmodSync, copyFileSync, cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { run } from './exec.js';
import { PROJECT_ROOT } from './state.js';

/**
 * The lab's registry: the sample registry (examples/registry) as it is, plus
 * what the lab adds in its own copy (never in examples/): route objects of the
 * fleet's prefixes (AS4242423998, so its routes are ROA-valid at the peers'
 * nodes) and, for peers beyond the first, a made-up network each with a
 * maintainer whose SSH key the lab generates. The first peer is the sample's
 * own demo operator, AS4242423999, signing with the demo key.
 */

export const SAMPLE_REGISTRY = join(PROJECT_ROOT, 'examples', 'registry');
export const FLEET_ASN = 4242423998;
export const DEMO_ASN = 4242423999;
export const DEMO_MNT = 'DEMO-MNT';
const DEMO_KEY = join(SAMPLE_REGISTRY, 'demo-keys', 'DEMO-MNT_ed25519');

/** Peer j (1-based): the demo network for j = 1, else a made-up AS424242390<j>-style network. */
export function peerIdentity(j: number): { asn: number; mntner: string; ipv4_prefix: string; ipv6_prefix: string } {
  if (j === 1) return { asn: DEMO_ASN, mntner: DEMO_MNT, ipv4_prefix: '172.23.250.0/27', ipv6_prefix: 'fd42:de30:1234::/48' };
  return { asn: 4242423900 + j, mntner: `LAB-PEER${j}-MNT`, ipv4_prefix: `172.22.${j}.0/27`, ipv6_prefix: `fd42:de30:${j}::/48` };
}

const rpsl = (lines: [string, string][]) => lines.map(([k, v]) => `${`${k}:`.padEnd(20)}${v}`).join('\n') + '\n';
const fileName = (prefix: string) => prefix.replace('/', '_');

function put(dir: string, type: string, name: string, text: string): void {
  mkdirSync(join(dir, 'data', type), { recursive: true });
  writeFileSync(join(dir, 'data', type, name), text);
}

export function writeRouteObjects(dir: string, asn: number, mntner: string, ipv4: string, ipv6: string): void {
  put(
    dir,
    'route',
    fileName(ipv4),
    rpsl([
      ['route', ipv4],
      ['origin', `AS${asn}`],
      ['mnt-by', mntner],
      ['source', 'DN42'],
    ]),
  );
  put(
    dir,
    'route6',
    fileName(ipv6),
    rpsl([
      ['route6', ipv6],
      ['origin', `AS${asn}`],
      ['mnt-by', mntner],
      ['source', 'DN42'],
    ]),
  );
}

/** Copies the sample registry to `dir` (the lab's REGISTRY_SOURCE). */
export function writeLabRegistry(dir: string): void {
  cpSync(join(SAMPLE_REGISTRY, 'data'), join(dir, 'data'), { recursive: true });
}

/** A made-up peer network in the lab registry: maintainer with a fresh SSH key, aut-num, routes. Answers the private key's path. */
export async function addPeerNetwork(dir: string, j: number, keyDir: string): Promise<string> {
  mkdirSync(keyDir, { recursive: true });
  const key = join(keyDir, 'id_ed25519');
  const id = peerIdentity(j);
  if (j === 1) {
    copyFileSync(DEMO_KEY, key);
    chmodSync(key, 0o600); // ssh-keygen refuses a readable key
    return key;
  }
  await run(['ssh-keygen', '-q', '-t', 'ed25519', '-N', '', '-C', `dn42lab-peer${j}`, '-f', key]);
  const publicKey = readFileSync(`${key}.pub`, 'utf8').trim().split(/\s+/).slice(0, 2).join(' ');
  put(
    dir,
    'mntner',
    id.mntner,
    rpsl([
      ['mntner', id.mntner],
      ['descr', `Made-up maintainer of lab peer ${j} (dn42-control lab only)`],
      ['admin-c', 'DEMO-DN42'],
      ['tech-c', 'DEMO-DN42'],
      ['auth', `${publicKey} lab-only`],
      ['mnt-by', id.mntner],
      ['source', 'DN42'],
    ]),
  );
  put(
    dir,
    'aut-num',
    `AS${id.asn}`,
    rpsl([
      ['aut-num', `AS${id.asn}`],
      ['as-name', `LAB-PEER-${j}`],
      ['descr', `Made-up network of lab peer ${j}`],
      ['admin-c', 'DEMO-DN42'],
      ['tech-c', 'DEMO-DN42'],
      ['mnt-by', id.mntner],
      ['source', 'DN42'],
    ]),
  );
  writeRouteObjects(dir, id.asn, id.mntner, id.ipv4_prefix, id.ipv6_prefix);
  return key;
}
