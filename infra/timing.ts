/** Waits, and the helpers every retry loop and idle loop share. */

export const sleep = (ms: number) => new Promise<void>((res) => setTimeout(res, ms));

/** A wait that `wake()` ends early (a new event, or a stop). */
export function wakeableSleep(ms: number): { done: Promise<void>; wake: () => void } {
  let wake!: () => void;
  const done = new Promise<void>((res) => {
    const timer = setTimeout(end, ms);
    function end() {
      clearTimeout(timer);
      res();
    }
    wake = end;
  });
  return { done, wake };
}

/** Backoff after the n-th consecutive failure: 200 ms doubling, at most 25.6 s. */
export function failureBackoffMs(failures: number): number {
  return Math.min(30_000, 100 * 2 ** Math.min(failures, 8));
}
