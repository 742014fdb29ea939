import { navigate } from '../shared/router.svelte.js';
import { api, session } from './session.svelte.js';

/** Ends this portal session at the server (its token is refused from then on) and here, then goes to the login page. */
export async function logOut(): Promise<void> {
  try {
    await api.post('/autopeering/auth/logout', { keepSession: true });
  } catch {
    // Already ended or no answer: the token leaves this tab either way.
  }
  session.signOut('You are logged out.');
  navigate('/login', { replace: true });
}
