import { client, type Answer } from '../shared/api.js';
import { navigate, route } from '../shared/router.svelte.js';

/** Where the console keeps its session token (session storage: gone with the tab). */
export const TOKEN_KEY = 'dn42.console.token';

class ConsoleSession {
  token = $state<string | null>(sessionStorage.getItem(TOKEN_KEY));
  /** `GET /ui/session` (document 3, "Session info"). */
  info = $state<Answer<'/ui/session'> | null>(null);
  /** Why the last session ended (shown on the sign-in page). */
  ended = $state<string | null>(null);

  signIn(token: string): void {
    sessionStorage.setItem(TOKEN_KEY, token);
    this.token = token;
    this.ended = null;
  }

  signOut(reason: string | null = null): void {
    sessionStorage.removeItem(TOKEN_KEY);
    this.token = null;
    this.info = null;
    this.ended = reason;
  }

  /** A 401: back to sign-in, keeping the page the operator was on. */
  expire(): void {
    if (!this.token) return;
    this.signOut('Your session has ended. Sign in again.');
    const here = route.path + (route.query.size ? `?${route.query}` : '');
    navigate(`/signin?next=${encodeURIComponent(here)}`, { replace: true });
  }
}

export const session = new ConsoleSession();

/** The console's API client: the session's Bearer token, 401 ends the session. */
export const api = client({ token: () => session.token, onUnauthorized: () => session.expire() });
