import { ApiError } from './api.js';

/** Dashboards refresh every 35 s, flap views every 60 s (issue 22); streams are never polled. */
export const DASHBOARD_EVERY_MS = 35_000;
export const FLAPS_EVERY_MS = 60_000;

/**
 * Data loaded now and again every `everyMs` while the tab is visible (a hidden
 * tab asks nothing; coming back refreshes at once if a period was missed). The
 * data on screen stays while a refresh is on its way or fails; the failure is
 * shown beside it. Use: `const p = new Poll(load, ms); $effect(() => p.start());`
 * (the effect re-runs, and reloads, when a value `load` reads changes).
 */
export class Poll<T> {
  data = $state<T | undefined>(undefined);
  error = $state<ApiError | undefined>(undefined);
  loading = $state(false);
  /** When the data on screen was fetched (ms). */
  at = $state(0);
  private controller?: AbortController;

  constructor(
    private readonly load: (signal: AbortSignal) => Promise<T>,
    private readonly everyMs = 0,
  ) {}

  /** Loads now and starts the timer; returns the stop function (an effect's cleanup). */
  start(): () => void {
    let timer: ReturnType<typeof setInterval> | undefined;
    let missed = false;
    void this.refresh();
    if (this.everyMs > 0) {
      timer = setInterval(() => {
        if (document.visibilityState === 'visible') void this.refresh();
        else missed = true;
      }, this.everyMs);
    }
    const onVisible = () => {
      if (document.visibilityState === 'visible' && missed) {
        missed = false;
        void this.refresh();
      }
    };
    document.addEventListener('visibilitychange', onVisible);
    return () => {
      if (timer) clearInterval(timer);
      document.removeEventListener('visibilitychange', onVisible);
      this.controller?.abort();
    };
  }

  async refresh(): Promise<void> {
    this.controller?.abort();
    const controller = new AbortController();
    this.controller = controller;
    this.loading = true;
    try {
      const data = await this.load(controller.signal);
      if (controller.signal.aborted) return;
      this.data = data;
      this.error = undefined;
      this.at = Date.now();
    } catch (err) {
      if (controller.signal.aborted || (err as Error).name === 'AbortError') return;
      this.error = err instanceof ApiError ? err : new ApiError(0, (err as Error).message || 'failed');
    } finally {
      if (this.controller === controller) this.loading = false;
    }
  }
}
