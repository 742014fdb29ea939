/** A tiny element builder: enough DOM for a handful of screens, no framework. */

export type Attrs = Record<string, string | number | boolean | EventListener | undefined>;
export type Child = Node | string | false | null | undefined;

/**
 * `h('button', {type: 'submit', onclick: go}, 'Continue')`. Attributes are set as
 * attributes (`true` as present, `false`/`undefined` left out); `on*` functions
 * become listeners. Text children are text nodes, never HTML.
 */
export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Attrs = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (typeof value === 'function') el.addEventListener(name.slice(2), value);
    else if (value === true) el.setAttribute(name, '');
    else if (value !== false && value !== undefined) el.setAttribute(name, String(value));
  }
  for (const child of children) if (child !== false && child !== null && child !== undefined) el.append(child);
  return el;
}

/** The value of a named control of a form (empty when absent). */
export function fieldValue(form: HTMLFormElement, name: string): string {
  const field = form.elements.namedItem(name) as HTMLInputElement | HTMLTextAreaElement | null;
  return field?.value ?? '';
}

/** A submit handler that keeps the page from navigating. */
export function onSubmit(handler: (form: HTMLFormElement) => void): EventListener {
  return (event) => {
    event.preventDefault();
    handler(event.currentTarget as HTMLFormElement);
  };
}
