/**
 * Waiting in specs, in one place. A spec never sleeps and then asserts that
 * something did NOT happen (under load the forbidden effect lands after the
 * assertion and the spec passes without testing anything). It waits for
 * something that does happen: `eventually` polls until a condition holds,
 * `within` bounds a promise, `barrier` causes a later effect on the same
 * channel and waits until it is handled, so whatever came before it is in.
 */

export interface WaitOptions {
  /** Give up after this long (default 5000 ms). */
  timeoutMs?: number;
  /** Poll this often (default 20 ms). */
  everyMs?: number;
  /** What is awaited, for the failure message. */
  what?: string;
  /** Adds the state seen at the timeout to the failure message. */
  explain?: () => unknown;
}

type Holding<T> = Exclude<T, false | null | undefined | 0 | ''>;

/**
 * Polls `check` until it holds, and answers what it answered. It holds when it
 * answers a truthy value; a falsy answer or a thrown error (a failed `expect`)
 * means "not yet", so an assertion ends with `return true`. At the timeout it
 * fails with `what`, the last error or answer, and `explain()` when given.
 * Short form: `eventually(check, timeoutMs, what)`.
 */
export async function eventually<T>(check: () => T | Promise<T>, options: WaitOptions | number = {}, what?: string): Promise<Holding<T>> {
  const given = typeof options === 'number' ? { timeoutMs: options, what } : options;
  const { timeoutMs = 5000, everyMs = 20, explain } = given;
  const awaited = given.what ?? 'condition';
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    let last: string;
    try {
      const value = await check();
      if (value) return value as Holding<T>;
      last = `last answer ${JSON.stringify(value)}`;
    } catch (err) {
      last = `last error: ${(err as Error)?.message ?? String(err)}`;
    }
    if (Date.now() > deadline) {
      const state = explain ? `; ${stringify(await explain())}` : '';
      throw new Error(`${awaited} not reached within ${timeoutMs} ms (${last})${state}`);
    }
    // Polling interval, not a sleep before an assertion.
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}

/** Answers what `promise` settles with, or fails when it has not settled within `ms`. */
export async function within<T>(promise: Promise<T>, ms: number, what = 'promise'): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      // The bound itself.
      new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: not settled within ${ms} ms`)), ms))),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The barrier pattern, for "nothing else happened": `cause` a later, observable
 * effect on the channel under test (one the channel hands over only after
 * everything sent before it), then wait until `seen` finds it handled and answer
 * what `seen` answered. Whatever the earlier steps caused has arrived by then,
 * so the caller can assert that nothing else did.
 */
export async function barrier<T>(cause: () => unknown, seen: () => T | Promise<T>, options: WaitOptions = {}): Promise<Holding<T>> {
  await cause();
  return eventually(seen, { what: 'the barrier', ...options });
}

function stringify(value: unknown): string {
  if (typeof value === 'string') return value;
  try {
    return JSON.stringify(value);
  } catch {
    return String(value);
  }
}
