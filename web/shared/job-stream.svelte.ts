import { ApiError, eventData, streamEvents, type Session } from './api.js';
import { apiError } from './form.svelte.js';

/**
 * The runner of a job a page starts on a node and then reads as it streams
 * (the log view, the probes): create it with a POST (its 422 field errors keyed
 * without the `spec.` prefix), read `…/stream` with the Bearer header until
 * its `done` event, stop on demand or when the page goes. A new run makes the
 * events of an older one fall silent.
 */
export class JobStream {
  /** Why the job was refused or the stream failed (the server's `detail`). */
  error = $state<ApiError | null>(null);
  /** The refusal's field errors by field of the job's `spec` (`lines`, `target`). */
  fieldErrors = $state<Record<string, string>>({});
  private controller: AbortController | null = null;
  private seq = 0;

  constructor(private readonly session: Session) {}

  /**
   * Creates the job (`create` answers its id), calls `started`, then hands each
   * event to `onEvent` until the `done` event (or the end of the stream): its
   * name, its JSON data (`{}` when none) and the raw text. Answers how the stream
   * ended: its `done` event came, the page stopped reading, it closed early, it
   * failed, the job was refused, or a newer run took over.
   */
  async run(job: {
    create: () => Promise<string>;
    stream: (id: string) => string;
    started?: (id: string) => unknown;
    onEvent: (event: { event: string; data: Record<string, unknown>; text: string }) => void;
  }): Promise<'done' | 'stopped' | 'lost' | 'failed' | 'refused' | 'superseded'> {
    this.error = null;
    this.fieldErrors = {};
    let id: string;
    try {
      id = await job.create();
    } catch (err) {
      const e = apiError(err);
      this.error = e;
      this.fieldErrors = Object.fromEntries(Object.entries(e.fieldErrors).map(([k, v]) => [k.replace(/^spec\./, ''), v]));
      return 'refused';
    }
    const run = ++this.seq;
    await job.started?.(id);
    const c = new AbortController();
    this.controller = c;
    let ended = false;
    try {
      await streamEvents(
        this.session,
        job.stream(id),
        (e) => {
          if (run !== this.seq) return;
          if (e.event === 'done') ended = true;
          job.onEvent({ event: e.event, data: eventData(e.data), text: e.data });
        },
        c.signal,
      );
      if (run !== this.seq) return 'superseded';
      return ended ? 'done' : c.signal.aborted ? 'stopped' : 'lost';
    } catch (err) {
      if (run !== this.seq) return 'superseded';
      this.error = apiError(err);
      return 'failed';
    } finally {
      if (this.controller === c) this.controller = null;
    }
  }

  /** Stops reading (the job ends on the node by itself). */
  stop(): void {
    this.controller?.abort();
  }
}
