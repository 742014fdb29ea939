/**
 * The identity contract's answer of `authorize-context` (document 1), read by the
 * authorization page and the console's sign-in: types only, and no imports, so the
 * pages that take it bundle nothing and type-check nothing of the server.
 */

/** How clients prove a human in the verification flow (`CAPTCHA_KIND`). */
export type CaptchaKind = 'pow' | 'external' | 'none';

/** The contract's valid answer of `authorize-context`: what the consent screen shows and `approve` gets back. */
export interface AuthorizeContextView {
  client: { name: string };
  scopes: { id: string; description: string }[];
  /** The server-normalised echo, sent back to `approve` untouched. */
  params: Record<string, unknown>;
  /** pow: the puzzle endpoint; external: the widget script or null; none: null. */
  captcha: { kind: CaptchaKind; endpoint: string | null };
}
