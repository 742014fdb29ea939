import { h, type Child } from './dom.js';
import type { Model, Msg } from './flow.js';

/** Pieces every screen uses: heading, error box, buttons. */

export type Dispatch = (msg: Msg) => void;

/** Ids the runner looks for after a render (focus management). */
export const ERROR_ID = 'error';
export const HEADING_ID = 'heading';

/** A screen: its heading (focusable, so focus can land on it), the error if any, then the content. */
export function section(model: Model, title: string, ...content: Child[]): HTMLElement {
  return h(
    'section',
    { 'aria-labelledby': HEADING_ID, 'aria-busy': model.busy ? 'true' : undefined },
    h('h1', { id: HEADING_ID, tabindex: -1 }, title),
    errorBox(model),
    ...content,
  );
}

/** The error, announced (`role=alert`) and focusable; its id lets the field point at it with `aria-describedby`. */
export function errorBox(model: Model): Child {
  if (!model.error) return null;
  return h('div', { id: ERROR_ID, class: 'error', role: 'alert', tabindex: -1 }, h('p', {}, model.error.detail));
}

/**
 * Whether the error is about the value in the screen's field, so the field is
 * marked `aria-invalid`: the page's own check of it, or the service refusing it
 * with one of `statuses`. A network failure, a refused captcha or a limit is not
 * the field's fault.
 */
export function fieldInvalid(model: Model, statuses: readonly number[]): boolean {
  const e = model.error;
  if (!e || e.error === 'captcha_failed') return false;
  return (e.status === 0 && !e.retryable) || statuses.includes(e.status);
}

/** `aria-invalid` and `aria-describedby` of a field with a hint, pointing at the error too when it is about the field. */
export function fieldState(model: Model, hintId: string, statuses: readonly number[]): { 'aria-invalid'?: string; 'aria-describedby': string } {
  const invalid = fieldInvalid(model, statuses);
  return { ...(invalid ? { 'aria-invalid': 'true' } : {}), 'aria-describedby': invalid ? `${hintId} ${ERROR_ID}` : hintId };
}

/** The controls are off while a step runs (`model.busy`); the status line says what runs. */
export function button(model: Model, label: string, onclick: () => void, kind: 'primary' | 'secondary' = 'secondary'): HTMLButtonElement {
  return h('button', { type: 'button', id: buttonId(label), class: kind, disabled: !!model.busy, onclick }, label);
}

export function submitButton(model: Model, label: string): HTMLButtonElement {
  return h('button', { type: 'submit', id: buttonId(label), class: 'primary', disabled: !!model.busy }, label);
}

/** A stable id from the label, so focus can return to the same button after the busy render that disabled it. */
export function buttonId(label: string): string {
  return `button-${label.toLowerCase().replace(/[^a-z0-9]+/g, '-')}`;
}

export function retryButton(model: Model, dispatch: Dispatch): Child {
  return model.retry
    ? h(
        'p',
        {},
        button(model, 'Try again', () => dispatch({ type: 'retry' }), 'primary'),
      )
    : null;
}
