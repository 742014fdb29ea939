import { isIP } from 'node:net';

/** A WireGuard endpoint split into host and port; the host keeps no brackets. */
export interface Endpoint {
  host: string;
  port: number;
}

/** `host:port` or `[v6]:port` (wg(8)); null when it is neither. */
export function splitEndpoint(text: string): Endpoint | null {
  const m = /^\[([^\]]+)\]:(\d{1,5})$/.exec(text) ?? /^([^:[\]]+):(\d{1,5})$/.exec(text);
  if (!m) return null;
  const port = Number(m[2]);
  return port >= 1 && port <= 65535 ? { host: m[1], port } : null;
}

/** Whether the endpoint names a host (needs resolving) rather than an address. */
export const isHostname = (e: Endpoint): boolean => isIP(e.host) === 0;

/** `ip:port`, with brackets for IPv6, as `wg set ... endpoint` takes it and `wg show` prints it. */
export const joinEndpoint = (address: string, port: number): string => (isIP(address) === 6 ? `[${address}]:${port}` : `${address}:${port}`);
