import type { AuthorizationParams } from '../../../domain/identity/authorization-request.js';
import { recordApproval } from '../../../commands/identity/oidc-storage.js';
import type { SessionClaims } from '../../../commands/identity/sessions.js';
import type { EventMetadata } from '../../../infra/eventstore/types.js';
import { IDENTITY_ERROR, identityError } from '../errors.js';
import type { ProviderDeps } from './configuration.js';
import { withOidcMetadata } from './metadata.js';
import type { OidcProviders } from './provider.js';

/** A session that names its maintainer (every session a challenge or passkey issues does). */
export type MaintainerSession = SessionClaims & { mnt: string };

/**
 * Issues the authorization code of an approved request through the provider's
 * own models, so its token endpoint redeems it like one it issued itself:
 * a Grant for the session's `sub` with the approved scopes (and resources), the
 * approval record that names the maintainer and ASN behind that `sub`, then a
 * 120 s single-use code bound to the PKCE challenge and the redirect URI.
 * The provider's login and consent steps are not used: the page is the login.
 */
export async function issueCode(
  providers: OidcProviders,
  deps: ProviderDeps,
  params: AuthorizationParams,
  session: MaintainerSession,
  metadata: EventMetadata,
): Promise<string> {
  const provider = await providers.current();
  return withOidcMetadata(metadata, async () => {
    const client = await provider.Client.find(params.client_id);
    // Deregistered between the check and here: the same fatal answer the check gives.
    if (!client) throw identityError(400, 'unknown client_id', IDENTITY_ERROR.invalidClient, true);
    const grant = new provider.Grant({ accountId: session.sub, clientId: client.clientId });
    grant.addOIDCScope(params.scope);
    for (const resource of params.resource ?? []) grant.addResourceScope(resource, params.scope);
    const grantId = await grant.save();
    await recordApproval(
      deps,
      {
        grant_id: grantId,
        client_id: client.clientId,
        sub: session.sub,
        mntner: session.mnt,
        asn: session.asn,
        method: session.method,
        scope: params.scope,
        resource: params.resource ?? [],
        redirect_uri: params.redirect_uri,
        at: deps.now().toISOString(),
      },
      metadata,
    );
    const code = new provider.AuthorizationCode({
      client,
      grantId,
      accountId: session.sub,
      authTime: session.iat,
      scope: params.scope,
      redirectUri: params.redirect_uri,
      codeChallenge: params.code_challenge,
      codeChallengeMethod: params.code_challenge_method,
      nonce: params.nonce,
      resource: params.resource,
      expiresWithSession: false,
      // Typed as required, though the model does not keep it (the token endpoint sets the grant type).
      gty: 'authorization_code',
    });
    return code.save();
  });
}
