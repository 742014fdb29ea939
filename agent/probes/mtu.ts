import type { ProbeSpec } from '../../domain/probes/spec.js';
import { familyOf } from './spec.js';
import { streamLines } from './lines.js';

/** IPv4 + ICMP headers, IPv6 + ICMPv6 headers: payload = MTU − header. */
const HEADER = { 4: 28, 6: 48 } as const;
/** Without `max_size`: the Ethernet MTU, the largest a dn42 tunnel underlay usually carries. */
export const DEFAULT_MTU_BOUND = 1500;

/**
 * Path MTU by bisection: DF pings (`ping -M do -s <payload>`) between a
 * payload that passes and one that does not, until they are adjacent. Two
 * quick echoes per size, so one lost packet does not read as "too big". Each
 * step is one output line; the last line is `PMTU_PAYLOAD <n>` (the largest
 * payload that passed, 0 when nothing passes). Resolves with that payload.
 */
export async function mtuBisection(spec: ProbeSpec, emit: (line: string) => void, signal?: AbortSignal): Promise<number> {
  const header = HEADER[familyOf(spec.target)];
  const upper = (spec.max_size ?? DEFAULT_MTU_BOUND) - header;
  const passes = async (payload: number) => {
    const argv = [
      'ping',
      '-n',
      '-M',
      'do',
      '-s',
      String(payload),
      '-c',
      '2',
      '-i',
      '0.2',
      '-W',
      '1',
      ...(spec.interface ? ['-I', spec.interface] : []),
      spec.target,
    ];
    const ok = (await streamLines(argv, () => {}, signal)) === 0;
    if (signal?.aborted) throw new Error('aborted');
    emit(`payload ${payload} (packet ${payload + header}): ${ok ? 'passes' : 'does not pass'}`);
    return ok;
  };
  emit(`MTU bisection to ${spec.target}, payload 0..${upper}`);
  let result = 0;
  if (await passes(upper)) result = upper;
  else if (await passes(0)) {
    let [low, high] = [0, upper];
    while (high - low > 1) {
      const mid = Math.floor((low + high) / 2);
      if (await passes(mid)) low = mid;
      else high = mid;
    }
    result = low;
  }
  emit(`PMTU_PAYLOAD ${result}`);
  return result;
}
