import type { ProbeSpec } from '../../domain/probes/spec.js';

/**
 * The argv of each streaming probe tool. Options come before the target and
 * every value is its own element, so nothing is parsed by a shell. Waits are
 * short: a probe has 120 s on the server before its stream is cut.
 */
export function probeArgv(spec: ProbeSpec): string[] {
  const noDns = spec.resolve ? [] : ['-n'];
  switch (spec.tool) {
    case 'ping':
      return ['ping', ...noDns, '-c', String(spec.count), '-W', '2', ...(spec.interface ? ['-I', spec.interface] : []), spec.target];
    case 'mtr':
      return [
        'mtr',
        '--report',
        '--report-wide',
        '--report-cycles',
        String(spec.count),
        ...noDns,
        ...(spec.interface ? ['--interface', spec.interface] : []),
        spec.target,
      ];
    case 'traceroute':
      return [
        'traceroute',
        ...noDns,
        '-q',
        String(Math.min(spec.count, 3)),
        '-w',
        '2',
        '-m',
        '30',
        ...(spec.interface ? ['-i', spec.interface] : []),
        spec.target,
      ];
    case 'mtu':
      throw new Error('the mtu probe is a bisection, not one command');
  }
}
