import { tick } from 'svelte';
import { ask, type Question } from '../../../shared/confirm.svelte.js';
import { Form } from '../../../shared/form.svelte.js';

/**
 * A mitigation's one flow, for prefixes and peers alike: `show` builds the
 * preview of what the write would change (a refusal it throws is the form's
 * error) and puts the keyboard on its heading; `apply` asks with what the
 * preview names, writes, drops the preview and puts the keyboard on the
 * page's notice. `busy` and `error` are the form's (a `Form`).
 */
export class PreviewFlow<A extends unknown[], P> extends Form {
  preview = $state<P | null>(null);
  /** The preview's heading (`bind:this`), focused once it shows. */
  heading = $state<HTMLElement | null>(null);

  /** `build`: the preview from the form's choice (`show('block')`); `onstart`: what a new preview clears on the page (its notice). */
  constructor(
    private readonly build: (...args: A) => Promise<P>,
    private readonly onstart: () => void,
  ) {
    super();
  }

  async show(...args: A): Promise<void> {
    this.error = null;
    this.preview = null;
    this.onstart();
    const built = await this.run(() => this.build(...args), 'preview');
    if (built === undefined) return;
    this.preview = built;
    await tick();
    this.heading?.focus();
  }

  /** Forget the preview (an input changed, or the operator discarded it). */
  discard(): void {
    this.preview = null;
  }

  async apply(question: (p: P) => Question, write: (p: P) => Promise<unknown>): Promise<void> {
    const p = this.preview;
    if (!p) return;
    if (!(await ask(question(p)))) return;
    await this.run(async () => {
      await write(p);
      this.preview = null;
      await tick();
      document.getElementById('mit-notice')?.focus();
    }, 'apply');
  }
}
