import type { PrefixFlaps } from '../telemetry/reports.js';
import { PREFIX_ALERT_OPEN } from './prefix-scores.js';

/**
 * What a node's prefix flap report adds to the rows of its previous report
 * (document 3, "Flap scores"): the changes of each key since that report, the
 * seconds between the two (the rate's divisor), and since when a key has been
 * at alert strength. Pure: infra/telemetry/prefix-flaps.ts reads the previous
 * rows and writes what this answers.
 */

export type PrefixFlapEntry = PrefixFlaps['entries'][number];

/** What the node's previous report left of one key. */
export interface PreviousPrefixRow {
  flaps: number | null;
  score: number;
  alert_since: Date | null;
}

export const prefixKeyOf = (prefix: string, peerAsn: number | null): string => `${prefix} ${peerAsn}`;

/** (prefix, peer_asn) is the key, null peer_asn included; a report naming one twice keeps its higher score. */
export function uniqueEntries(entries: readonly PrefixFlapEntry[]): PrefixFlapEntry[] {
  const byKey = new Map<string, PrefixFlapEntry>();
  for (const entry of entries) {
    const key = prefixKeyOf(entry.prefix, entry.peer_asn);
    if ((byKey.get(key)?.score ?? -1) < entry.score) byKey.set(key, entry);
  }
  return [...byKey.values()];
}

/**
 * Seconds from the previous report's `captured_at` to this one's; null when
 * there is no previous report, or this one is not later (a clock set back, a
 * replay): then there is no interval to divide by and no baseline to count from.
 */
export function reportInterval(previousCapturedAt: Date | null, capturedAt: Date): number | null {
  if (previousCapturedAt === null) return null;
  const seconds = (capturedAt.getTime() - previousCapturedAt.getTime()) / 1000;
  return seconds > 0 ? seconds : null;
}

/**
 * Changes of a key since the node's previous report: what the agent counted
 * (announcements + withdrawals), or for an older agent that omits them, how
 * much the cumulative `flaps` grew over the previous row. Null when unknown
 * (no baseline, key not in the previous report, a counter that went down): never 0.
 */
export function changesSincePrevious(entry: PrefixFlapEntry, previous: PreviousPrefixRow | undefined, hasBaseline: boolean): number | null {
  if (!hasBaseline) return null;
  const a = entry.announcements ?? null;
  const w = entry.withdrawals ?? null;
  if (a !== null || w !== null) return (a ?? 0) + (w ?? 0);
  const flaps = entry.flaps ?? null;
  if (!previous || previous.flaps === null || flaps === null || flaps < previous.flaps) return null;
  return flaps - previous.flaps;
}

/** Since when the key has been at alert strength: kept from the previous row while it stays there, this report's time when it just got there. */
export function alertSince(entry: PrefixFlapEntry, previous: PreviousPrefixRow | undefined, capturedAt: Date): Date | null {
  if (entry.score < PREFIX_ALERT_OPEN) return null;
  return previous?.alert_since ?? capturedAt;
}

/** One row of the node's new prefix flap table. */
export interface NextPrefixRow {
  entry: PrefixFlapEntry;
  changes: number | null;
  alert_since: Date | null;
}

/**
 * The rows a report leaves, from the previous report's rows (by `prefixKeyOf`)
 * and its `captured_at` (null: none): each key once, with its changes and alert start;
 * and the interval between the two reports (null: none to divide by).
 */
export function nextPrefixRows(
  report: Pick<PrefixFlaps, 'entries' | 'captured_at'>,
  previous: ReadonlyMap<string, PreviousPrefixRow>,
  previousCapturedAt: Date | null,
): { rows: NextPrefixRow[]; interval_s: number | null } {
  const capturedAt = new Date(report.captured_at);
  const interval = reportInterval(previousCapturedAt, capturedAt);
  const rows = uniqueEntries(report.entries).map((entry) => {
    const before = previous.get(prefixKeyOf(entry.prefix, entry.peer_asn));
    return { entry, changes: changesSincePrevious(entry, before, interval !== null), alert_since: alertSince(entry, before, capturedAt) };
  });
  return { rows, interval_s: interval };
}
