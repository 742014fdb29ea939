import { Value } from '@sinclair/typebox/value';
import { parseIp } from '../../domain/net/ip.js';
import { ProbeSpecInput, type ProbeSpec } from '../../domain/probes/spec.js';

/**
 * The probe spec of a `probe_request`, checked before anything runs: the
 * server's own schema (tool, count, interface pattern, max_size), then the
 * target must be a plain IP address literal. Every value ends up as one argv
 * element of ping, mtr or traceroute (never a shell), and neither a host name
 * nor a leading `-` gets through. The address ranges a probe may aim at are the
 * server's policy (domain/probes/targets.ts); the agent does not repeat them.
 */
export function checkProbeSpec(spec: unknown): ProbeSpec {
  if (!Value.Check(ProbeSpecInput, spec)) {
    const first = [...Value.Errors(ProbeSpecInput, spec)][0];
    throw new Error(`invalid probe spec: ${first ? `${first.path || '/'} ${first.message}` : 'not an object'}`);
  }
  const ip = parseIp(spec.target);
  if (!ip) throw new Error(`invalid target ${spec.target}`);
  const linkLocal = ip.range() === 'linkLocal';
  return {
    tool: spec.tool,
    target: spec.target,
    count: spec.count ?? 10,
    resolve: spec.resolve ?? true,
    interface: linkLocal ? (spec.interface ?? null) : null,
    max_size: spec.max_size ?? null,
  };
}

/** 4 or 6, for header sizes and tool flags. */
export const familyOf = (target: string): 4 | 6 => (parseIp(target)?.kind() === 'ipv6' ? 6 : 4);
