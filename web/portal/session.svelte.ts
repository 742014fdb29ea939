import { client, type Answer } from '../shared/api.js';
import { basePath, navigate, route } from '../shared/router.svelte.js';

/** Where the portal keeps its session token (session storage: gone with the tab). */
export const TOKEN_KEY = 'dn42.portal.token';

class PortalSession {
  token = $state<string | null>(sessionStorage.getItem(TOKEN_KEY));
  /** The portal profile (document 3, `/me`): from the identity service's cached claims. */
  me = $state<Answer<'/autopeering/me'> | null>(null);
  /** Why the last session ended (shown on the login page). */
  ended = $state<string | null>(null);

  signIn(token: string, me: Answer<'/autopeering/me'>): void {
    sessionStorage.setItem(TOKEN_KEY, token);
    this.token = token;
    this.me = me;
    this.ended = null;
  }

  signOut(reason: string | null = null): void {
    sessionStorage.removeItem(TOKEN_KEY);
    this.token = null;
    this.me = null;
    this.ended = reason;
  }

  /** A 401: back to the login page, keeping the page the user was on. */
  expire(): void {
    if (!this.token) return;
    this.signOut('Your portal session has ended. Log in again to continue.');
    navigate(`/login?next=${encodeURIComponent(here())}`, { replace: true });
  }
}

/** The current app path with its query (what `next` keeps). */
export function here(): string {
  return route.path + (route.query.size ? `?${route.query}` : '');
}

/**
 * The page to go to after a login: an app path (`/peerings/3`). A site path of
 * the portal (`/portal/peerings/3`) is taken below the base; anything that is
 * not a path of this site (`//host`, `https://…`, backslashes) goes home.
 */
export function safeNext(next: string | null | undefined): string {
  if (!next || !next.startsWith('/') || next.startsWith('//') || /[\\\u0000-\u001f\u007f]/.test(next)) return '/';
  const base = basePath();
  if (next.startsWith(base)) return `/${next.slice(base.length)}`;
  return next;
}

export const session = new PortalSession();

/** The portal's API client: the portal session's Bearer token; a 401 ends the session. */
export const api = client({ token: () => session.token, onUnauthorized: () => session.expire() });

/** A client without the session (the handoff exchange). */
export const anonymous = client({ token: () => null, onUnauthorized: () => {} });
