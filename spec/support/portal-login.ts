import { expect } from 'chai';
import { api, expectResponse } from './http.js';
import { queryOf, type OidcFixture } from './oidc.js';

type Client = ReturnType<typeof api>;

/**
 * A portal login through the real identity service, as a browser and the
 * authorization page drive it: `/auth/login`, the page's `authorize-context`
 * and `approve` (with an identity session, e.g. one earned by an SSH signature
 * made by `ssh-keygen -Y sign`: `sshSession`), the portal's callback, and the
 * one-time handoff exchange.
 */
export interface PortalLogin {
  /** What the authorization page does with the authorization URL: context, then approve (or deny). Answers the redirect. */
  approve(authorizeUrl: string, deny?: boolean): Promise<string>;
  /** The browser at the callback: the portal's redirect to its completion page. */
  callback(redirectTo: string): Promise<URL>;
  /** `/auth/login` → page → callback: the completion URL. */
  login(next?: string): Promise<URL>;
  /** A whole login ending in the handoff exchange: the portal session token and the exchange's body. */
  loggedIn(): Promise<{ token: string; body: Record<string, any> }>;
}

/**
 * Logins at the control server `controlUrl` (`portal` a client of it) against
 * the identity service of `f`; `identitySession` answers the page user's current
 * identity session token.
 */
export function portalLogin(f: OidcFixture, controlUrl: string, portal: Client, identitySession: () => string): PortalLogin {
  const self: PortalLogin = {
    async approve(authorizeUrl, deny = false) {
      const context = await f.client.get(`/api/v1/oauth/authorize-context?${queryOf(authorizeUrl)}`);
      expectResponse(context).status(200);
      expect(context.body.client.name).to.equal('Autopeering portal');
      const approved = await f.client.post('/api/v1/oauth/approve', { ...context.body.params, deny }, { token: identitySession() });
      expectResponse(approved).status(200);
      return approved.body.redirect_to;
    },
    async callback(redirectTo) {
      expect(redirectTo.startsWith(`${controlUrl}/control/v1/autopeering/auth/callback?`)).to.equal(true);
      const res = await portal.get(redirectTo.slice(controlUrl.length));
      expect(res.status, res.text).to.equal(302);
      return new URL(res.headers.get('location')!);
    },
    async login(next) {
      const res = await portal.get(`/control/v1/autopeering/auth/login${next === undefined ? '' : `?next=${encodeURIComponent(next)}`}`);
      expect(res.status, res.text).to.equal(302);
      return self.callback(await self.approve(res.headers.get('location')!));
    },
    async loggedIn() {
      const complete = await self.login();
      const res = await portal.post('/control/v1/autopeering/auth/exchange', { handoff: complete.searchParams.get('handoff') });
      expectResponse(res).status(200);
      return { token: res.body.session_token, body: res.body };
    },
  };
  return self;
}
