import { ApiError } from './api.js';

/** Any failure as an `ApiError` (what `ErrorNotice` shows): the server's own, or one with status 0. */
export function apiError(err: unknown): ApiError {
  return err instanceof ApiError ? err : new ApiError(0, (err as Error | null)?.message || String(err));
}

/**
 * One form's state: `busy` while its action runs (buttons disable), the
 * `error` of the last try (the server's `detail`, field errors by path), and
 * `run`, which clears the error, runs the action and keeps what it failed
 * with. Use: `const form = new Form();` then
 * `<form onsubmit={form.submit(async () => {...})}>` or
 * `onclick={() => form.run(async () => {...})}`; `{#if form.error}<ErrorNotice error={form.error} />`.
 */
export class Form {
  busy = $state(false);
  error = $state<ApiError | null>(null);
  /** Which action runs (a form with several buttons: `form.running === 'delete'`). */
  running = $state('');

  /** Runs `action` unless one runs already; answers its result, or undefined when it failed (the error is in `error`). */
  async run<T>(action: () => Promise<T>, name = 'run'): Promise<T | undefined> {
    if (this.busy) return undefined;
    this.busy = true;
    this.running = name;
    this.error = null;
    try {
      return await action();
    } catch (err) {
      if ((err as Error | null)?.name === 'AbortError') return undefined;
      this.error = apiError(err);
      return undefined;
    } finally {
      this.busy = false;
      this.running = '';
    }
  }

  /** A submit handler: no page reload, then `run`. */
  submit(action: () => Promise<unknown>): (event: SubmitEvent) => Promise<void> {
    return async (event) => {
      event.preventDefault();
      await this.run(action);
    };
  }

  /** A field's complaint from the last 422 (`form.field('remote_asn')`). */
  field(path: string): string | undefined {
    return this.error?.fieldErrors[path];
  }

  /** Forget the last failure (the form was closed or reset). */
  clear(): void {
    this.error = null;
  }
}
