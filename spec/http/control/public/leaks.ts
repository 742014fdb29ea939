import { isIPv4, isIPv6 } from 'node:net';

/** What must never reach an anonymous reader, found in a raw response text. */
export interface Leaks {
  ipv4: string[];
  ipv6: string[];
  wireguard_keys: string[];
  endpoints: string[];
  tokens: string[];
}

const unique = (xs: Iterable<string>) => [...new Set(xs)].sort();

/**
 * Scans text for IP addresses (v4 and v6, with or without a prefix length or
 * port), WireGuard keys (44 base64 characters ending in `=`), `host:port`
 * endpoints and agent tokens. Candidates are checked with `node:net`, so
 * timestamps (`12:00:00`) and versions (`1.0.200`) do not count.
 */
export function scanForLeaks(text: string, secrets: readonly string[] = []): Leaks {
  const ipv4 = [...text.matchAll(/(?<![\d.])\d{1,3}(?:\.\d{1,3}){3}(?![\d.])/g)].map((m) => m[0]).filter((s) => isIPv4(s));
  const ipv6 = [...text.matchAll(/[0-9A-Fa-f:.]*:[0-9A-Fa-f:.]*:[0-9A-Fa-f:.]*/g)].map((m) => m[0].replace(/^\.+|\.+$/g, '')).filter((s) => isIPv6(s));
  const wireguard_keys = [...text.matchAll(/[A-Za-z0-9+/]{42}[AEIMQUYcgkosw480]=/g)].map((m) => m[0]);
  const endpoints = [...text.matchAll(/(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+):\d{1,5}\b/g)].map((m) => m[0]);
  const tokens = [...text.matchAll(/agt_[A-Za-z0-9]+/g)].map((m) => m[0]).concat(secrets.filter((s) => s.length > 0 && text.includes(s)));
  return { ipv4: unique(ipv4), ipv6: unique(ipv6), wireguard_keys: unique(wireguard_keys), endpoints: unique(endpoints), tokens: unique(tokens) };
}
