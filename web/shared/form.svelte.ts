import { untrack } from 'svelte';
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

  /** Which call is the latest (`latest` lets a newer call supersede a running one). */
  #call = 0;

  /** Runs `action` unless one runs already; answers its result, or undefined when it failed (the error is in `error`). */
  async run<T>(action: () => Promise<T>, name = 'run'): Promise<T | undefined> {
    // Not a dependency of the effect that calls it: its own end would run it again.
    if (untrack(() => this.busy)) return undefined;
    return this.#go(action, name);
  }

  /**
   * Runs `action` even while an earlier one runs (a load the user restarted with
   * another filter): the earlier one's answer and failure are dropped, `busy`
   * lasts until the latest ends. Answers undefined for a superseded or failed call.
   */
  async latest<T>(action: () => Promise<T>, name = 'load'): Promise<T | undefined> {
    return this.#go(action, name);
  }

  async #go<T>(action: () => Promise<T>, name: string): Promise<T | undefined> {
    const call = ++this.#call;
    this.busy = true;
    this.running = name;
    this.error = null;
    try {
      const result = await action();
      return call === this.#call ? result : undefined;
    } catch (err) {
      if (call === this.#call && (err as Error | null)?.name !== 'AbortError') this.error = apiError(err);
      return undefined;
    } finally {
      if (call === this.#call) {
        this.busy = false;
        this.running = '';
      }
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
