/** An inclusive range of UDP/TCP ports (a WireGuard listen-port pool). */
export interface PortRange {
  start: number;
  end: number;
}

/** One of the accepted range shapes as `{start, end}`, or null when it is none of them. */
export function parsePortRange(value: unknown): PortRange | null {
  let start: unknown;
  let end: unknown;
  if (typeof value === 'string') {
    const m = /^(\d{1,5})-(\d{1,5})$/.exec(value.trim());
    if (!m) return null;
    [start, end] = [Number(m[1]), Number(m[2])];
  } else if (Array.isArray(value) && value.length === 2) {
    [start, end] = value;
  } else if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    ({ start, end } = value as { start?: unknown; end?: unknown });
  }
  const port = (n: unknown): n is number => Number.isInteger(n) && (n as number) >= 1 && (n as number) <= 65535;
  return port(start) && port(end) && start <= end ? { start, end } : null;
}
