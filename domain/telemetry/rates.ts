/**
 * The increase of a cumulative byte counter (WireGuard peers, interfaces)
 * between two readings. A counter that went down was reset (the interface or the
 * tunnel restarted and counts from zero again): what it counted since the reset
 * is at least its current value, so that is the increase. A reset therefore never
 * gives a negative rate, and never a spike either (at most what really flowed).
 */
export function counterIncrease(previous: number, current: number): number {
  return current >= previous ? current - previous : current;
}
