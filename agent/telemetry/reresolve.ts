import { lookup } from 'node:dns/promises';
import type { WireguardReresolve } from '../../domain/telemetry/reports.js';
import type { DesiredState } from '../../domain/desired-state/schema.js';
import { isHostname, joinEndpoint, splitEndpoint } from './endpoints.js';
import { describeOutcome, runCommand } from '../exec.js';
import type { WgInterface } from './wireguard.js';

type Item = WireguardReresolve['interfaces'][number];

/** How the re-resolution reaches the outside: name lookup and `wg`. Tests pass a resolver for made-up names. */
export interface ReresolveDeps {
  wg: string[];
  resolve(host: string): Promise<string>;
}

export const systemResolve = async (host: string): Promise<string> => (await lookup(host)).address;

/** Whether any peer of the desired state has a host-name endpoint (else there is nothing to re-resolve). */
export function hasHostnameEndpoints(desired: DesiredState): boolean {
  return desired.interfaces.some((i) => {
    const e = i.peer.endpoint ? splitEndpoint(i.peer.endpoint) : null;
    return e !== null && isHostname(e) && i.peer.public_key !== null;
  });
}

/**
 * Endpoint re-resolution: WireGuard resolves a host name once, when the
 * configuration is set, so a peer behind a dynamic address is lost when it
 * moves. For every desired interface whose peer endpoint is a host name, this
 * resolves it again, compares with the endpoint the kernel uses now, and
 * `wg set <if> peer <key> endpoint <ip:port>` when they differ. Peers with an
 * address endpoint, no endpoint or no key are not checked.
 */
export async function reresolveEndpoints(desired: DesiredState, current: WgInterface[], deps: ReresolveDeps): Promise<Item[]> {
  const items: Item[] = [];
  for (const iface of desired.interfaces) {
    const { endpoint, public_key } = iface.peer;
    const wanted = endpoint ? splitEndpoint(endpoint) : null;
    if (!endpoint || !wanted || !isHostname(wanted) || !public_key) continue;
    items.push(await reresolveOne(iface.name, endpoint, wanted, public_key, current, deps));
  }
  return items;
}

async function reresolveOne(
  name: string,
  endpoint: string,
  wanted: { host: string; port: number },
  key: string,
  current: WgInterface[],
  deps: ReresolveDeps,
): Promise<Item> {
  const peer = current.find((i) => i.name === name)?.peers.find((p) => p.public_key === key);
  const item: Item = { interface: name, endpoint, previous_address: peer?.endpoint ?? null, address: null, reresolved: false, error: null };
  try {
    item.address = joinEndpoint(await deps.resolve(wanted.host), wanted.port);
  } catch (err) {
    return { ...item, error: `cannot resolve ${wanted.host}: ${(err as Error).message}`.slice(0, 2000) };
  }
  if (!peer) return { ...item, error: `peer ${key} is not configured on ${name}` };
  if (peer.endpoint === item.address) return item;
  const argv = [...deps.wg, 'set', name, 'peer', key, 'endpoint', item.address];
  const set = await runCommand(argv, 10_000);
  if (set.code !== 0) return { ...item, error: describeOutcome(argv, set).slice(0, 2000) };
  return { ...item, reresolved: true };
}
