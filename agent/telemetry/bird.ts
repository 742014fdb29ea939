import { BGP_STATES, type BgpState } from '../../domain/telemetry/reports.js';

/** One BGP protocol as `birdc show protocols all` describes it. */
export interface BirdBgpProtocol {
  name: string;
  state: BgpState;
  /** The protocol column (`up`, `start`, `down`, ...). */
  proto_state: string;
  /** ISO time of the last state change, null when BIRD's `Since` column cannot be read. */
  since: string | null;
  /** The `Info` column (`Established`, `Active; Socket: Connection refused`), null when empty. */
  info: string | null;
  neighbor: string | null;
  remote_asn: number | null;
  last_error: string | null;
  /** Sums over the protocol's channels (an MP-BGP session has two); null when no channel shows routes. */
  imported: number | null;
  exported: number | null;
  filtered: number | null;
  /** Import updates plus import withdrawals BIRD accepted, summed over the channels since the protocol came up; null without channel stats. */
  import_changes: number | null;
  /** The route counts of each address family's channel (an MP-BGP session has both); null for a family without a channel showing routes. */
  families: { ipv4: FamilyRoutes | null; ipv6: FamilyRoutes | null };
}

export interface FamilyRoutes {
  imported: number;
  exported: number;
}

const HEADER = /^(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\d{4}-\d{2}-\d{2}(?: \d{2}:\d{2}:\d{2}(?:\.\d+)?)?|\d{2}:\d{2}:\d{2}(?:\.\d+)?)(?:\s+(.*?))?\s*$/;

/**
 * Parses `birdc show protocols all` (BIRD 2) into its BGP protocols; other
 * protocols (device, static, kernel, OSPF) are skipped. Pure: `now` places
 * BIRD's time-of-day `Since` values (its default format for today) on a date.
 * Times without a zone are the node's local time, as BIRD prints them.
 */
export function parseBirdProtocols(text: string, now: Date = new Date()): BirdBgpProtocol[] {
  const protocols: BirdBgpProtocol[] = [];
  for (const block of text.split(/\n\s*\n/)) {
    const lines = block.split('\n').filter((l) => l.trim() !== '' && !/^BIRD .* ready\.$/.test(l) && !/^Name\s+Proto\s+Table/.test(l));
    const head = lines[0] === undefined ? null : HEADER.exec(lines[0]);
    if (!head || head[2] !== 'BGP') continue;
    const field = (label: string) => lines.map((l) => new RegExp(`^\\s+${label}:\\s+(.*?)\\s*$`).exec(l)?.[1]).find((v) => v !== undefined) ?? null;
    const routes = lines.map((l) => /^\s+Routes:\s+(.*)$/.exec(l)?.[1]).filter((v): v is string => v !== undefined);
    const asn = field('Neighbor AS');
    protocols.push({
      name: head[1],
      state: bgpState(field('BGP state')),
      proto_state: head[4],
      since: birdTime(head[5], now),
      // BIRD pads the state word of the info column before its message: `Active        Socket: Connection refused`.
      info: head[6] ? head[6].replace(/\s{2,}/g, '; ') : null,
      neighbor: field('Neighbor address'),
      remote_asn: asn && /^\d+$/.test(asn) ? Number(asn) : null,
      last_error: field('Last error'),
      imported: sumRoutes(routes, 'imported'),
      exported: sumRoutes(routes, 'exported'),
      filtered: sumRoutes(routes, 'filtered'),
      import_changes: importChanges(lines),
      families: { ipv4: familyRoutes(lines, 'ipv4'), ipv6: familyRoutes(lines, 'ipv6') },
    });
  }
  return protocols;
}

/** BIRD's BGP state names lower-cased; `Close` (the session is being torn down) and anything unknown count as down. */
function bgpState(text: string | null): BgpState {
  const lower = (text ?? '').toLowerCase();
  return (BGP_STATES as readonly string[]).includes(lower) ? (lower as BgpState) : 'down';
}

function sumRoutes(lines: string[], kind: 'imported' | 'exported' | 'filtered'): number | null {
  const counts = lines.map((l) => new RegExp(`(\\d+) ${kind}`).exec(l)?.[1]).filter((v): v is string => v !== undefined);
  return counts.length === 0 ? null : counts.reduce((sum, n) => sum + Number(n), 0);
}

/** The `Routes:` line of the protocol's `Channel ipv4` (or `ipv6`) section; null without that channel or while it shows no routes (down). */
function familyRoutes(lines: string[], family: 'ipv4' | 'ipv6'): FamilyRoutes | null {
  const start = lines.findIndex((l) => new RegExp(`^\\s+Channel ${family}\\s*$`).test(l));
  if (start < 0) return null;
  const end = lines.findIndex((l, i) => i > start && /^\s+Channel \S+\s*$/.test(l));
  const section = lines.slice(start + 1, end < 0 ? undefined : end);
  const routes = section.map((l) => /^\s+Routes:\s+(.*)$/.exec(l)?.[1]).filter((v): v is string => v !== undefined);
  const imported = sumRoutes(routes, 'imported');
  const exported = sumRoutes(routes, 'exported');
  return imported === null || exported === null ? null : { imported, exported };
}

/** The `accepted` column (the last) of the `Import updates:` and `Import withdraws:` rows of every channel's route change stats. */
function importChanges(lines: string[]): number | null {
  const counts = lines.map((l) => /^\s+Import (?:updates|withdraws):.*?(\d+)\s*$/.exec(l)?.[1]).filter((v): v is string => v !== undefined);
  return counts.length === 0 ? null : counts.reduce((sum, n) => sum + Number(n), 0);
}

/**
 * BIRD's `Since`: `YYYY-MM-DD HH:MM:SS` (`timeformat protocol iso long`),
 * `HH:MM:SS.mmm` (default, today) or `YYYY-MM-DD` (default, older days).
 * A time of day later than `now` is yesterday's (the clock passed midnight).
 */
export function birdTime(text: string, now: Date): string | null {
  const full = /^(\d{4})-(\d{2})-(\d{2})(?: (\d{2}):(\d{2}):(\d{2})(\.\d+)?)?$/.exec(text);
  if (full) {
    const [, y, mo, d, h = '0', mi = '0', s = '0', frac] = full;
    return new Date(+y, +mo - 1, +d, +h, +mi, +s, fraction(frac)).toISOString();
  }
  const time = /^(\d{2}):(\d{2}):(\d{2})(\.\d+)?$/.exec(text);
  if (!time) return null;
  const at = new Date(now.getFullYear(), now.getMonth(), now.getDate(), +time[1], +time[2], +time[3], fraction(time[4]));
  if (at.getTime() > now.getTime() + 60_000) at.setDate(at.getDate() - 1);
  return at.toISOString();
}

const fraction = (text: string | undefined): number => (text ? Math.round(Number(`0${text}`) * 1000) : 0);
