/**
 * A small history router for an app served under a base path (the `<base href>`
 * the server writes into `index.html`): `route.path` is the path below the base
 * (`/nodes/n1`), `route.query` its query. Same-origin links below the base are
 * followed without a reload; everything else is left to the browser.
 */

import type { Component } from 'svelte';

/**
 * A page of an app: its path pattern below the app's base (`/nodes/:id`), its
 * title and its module (loaded when first visited, so the first load stays
 * small). A page component takes `params` (the path's `:names`).
 */
export interface PageRoute {
  name: string;
  pattern: string;
  title: string;
  load: () => Promise<{ default: Component<{ params: Record<string, string> }> }>;
}

/** The title of the page at `path`, or undefined for none. */
export function titleOf(path: string, routes: readonly PageRoute[]): string | undefined {
  const m = match(path, routes);
  return m ? routes.find((r) => r.name === m.name)?.title : undefined;
}

export function basePath(): string {
  return new URL(document.baseURI).pathname.replace(/\/?$/, '/');
}

function current(): { path: string; query: URLSearchParams } {
  const base = basePath();
  const p = location.pathname.startsWith(base) ? location.pathname.slice(base.length - 1) : location.pathname;
  return { path: p || '/', query: new URLSearchParams(location.search) };
}

class Route {
  path = $state('/');
  query = $state(new URLSearchParams());
  constructor() {
    const c = current();
    this.path = c.path;
    this.query = c.query;
  }
  sync(): void {
    const c = current();
    this.path = c.path;
    this.query = c.query;
  }
}

export const route = new Route();

/** The URL of an app path (`/nodes/n1?x=1`) below the base. */
export function href(path: string): string {
  return basePath() + path.replace(/^\//, '');
}

/** Goes to an app path; `replace` keeps the history entry. */
export function navigate(path: string, options: { replace?: boolean } = {}): void {
  const url = href(path);
  if (options.replace) history.replaceState(null, '', url);
  else history.pushState(null, '', url);
  route.sync();
  if (!options.replace) window.scrollTo(0, 0);
}

/** Sets query parameters on the current path (replacing the history entry). */
export function setQuery(values: Record<string, string | number | null | undefined>): void {
  const q = new URLSearchParams(route.query);
  for (const [k, v] of Object.entries(values)) {
    if (v === null || v === undefined || v === '') q.delete(k);
    else q.set(k, String(v));
  }
  const qs = q.toString();
  history.replaceState(null, '', href(route.path) + (qs ? `?${qs}` : ''));
  route.sync();
}

/** Matches `path` against patterns like `/nodes/:id`; the first match wins. */
export function match(path: string, patterns: readonly { name: string; pattern: string }[]): { name: string; params: Record<string, string> } | null {
  const parts = path.split('/').filter(Boolean);
  for (const { name, pattern } of patterns) {
    const want = pattern.split('/').filter(Boolean);
    if (want.length !== parts.length) continue;
    const params: Record<string, string> = {};
    let ok = true;
    for (let i = 0; i < want.length; i++) {
      if (want[i].startsWith(':')) params[want[i].slice(1)] = decodeURIComponent(parts[i]);
      else if (want[i] !== parts[i]) {
        ok = false;
        break;
      }
    }
    if (ok) return { name, params };
  }
  return null;
}

/** Installs the link and history handling once per app. */
export function startRouter(): void {
  window.addEventListener('popstate', () => route.sync());
  document.addEventListener('click', (event) => {
    if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    const a = (event.target as Element | null)?.closest?.('a');
    if (!a || a.target || a.hasAttribute('download') || a.dataset.external !== undefined) return;
    const url = new URL(a.href, document.baseURI);
    const base = basePath();
    if (url.origin !== location.origin || !url.pathname.startsWith(base)) return;
    event.preventDefault();
    history.pushState(null, '', url.pathname + url.search + url.hash);
    route.sync();
    window.scrollTo(0, 0);
  });
}
