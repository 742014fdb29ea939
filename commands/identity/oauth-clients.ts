import { randomBytes } from 'node:crypto';
import { fold } from '../../domain/decider.js';
import { Conflict } from '../../domain/errors.js';
import { oauthClientDecider, oauthClientStream, type OAuthClientEvent } from '../../domain/identity/oauth-clients.js';
import { sha256Hex } from '../../domain/sha256.js';
import type { EventMetadata } from '../../infra/eventstore/types.js';
import { execute, handleCommand } from '../handle.js';
import { revocationsOf, type OidcStorageDeps } from './oidc-storage.js';

export interface NewOAuthClient {
  name: string;
  redirect_uris: string[];
  confidential: boolean;
}

/** The registration response: the only place the secret appears in plaintext. */
export interface RegisteredOAuthClient extends NewOAuthClient {
  client_id: string;
  client_secret?: string;
}

/** 128 random bits for the id, 256 for the secret, base64url. */
const randomToken = (bytes: number) => randomBytes(bytes).toString('base64url');

/**
 * Registers an application. A confidential one gets a secret, returned here once;
 * the event (and so every read model) keeps only its sha256.
 */
export async function registerOAuthClient(deps: OidcStorageDeps, input: NewOAuthClient, metadata: EventMetadata): Promise<RegisteredOAuthClient> {
  const clientId = randomToken(16);
  const secret = input.confidential ? randomToken(32) : undefined;
  const client = {
    client_id: clientId,
    name: input.name,
    redirect_uris: input.redirect_uris,
    confidential: input.confidential,
    secret_sha256: secret ? sha256Hex(secret) : null,
  };
  await handleCommand(deps.store, oauthClientStream(clientId), oauthClientDecider, { type: 'RegisterOAuthClient', client, now: deps.now() }, metadata);
  await deps.settle?.();
  return {
    client_id: clientId,
    name: input.name,
    redirect_uris: input.redirect_uris,
    confidential: input.confidential,
    ...(secret ? { client_secret: secret } : {}),
  };
}

/**
 * Deregisters an application and, in the same append, revokes everything the
 * provider stored for it: grants, codes, access and refresh tokens.
 */
export async function deregisterOAuthClient(deps: OidcStorageDeps, clientId: string, metadata: EventMetadata): Promise<{ revoked: number }> {
  const streamId = oauthClientStream(clientId);
  const { result } = await execute(
    deps.store,
    [streamId],
    async (streams, more) => {
      const state = fold(oauthClientDecider, streams[streamId].events as OAuthClientEvent[]);
      const events = oauthClientDecider.decide({ type: 'DeregisterOAuthClient', clientId, now: deps.now() }, state);
      const revocations = await revocationsOf(deps, { clientId });
      for (const r of revocations) await more(r.streamId, 'version');
      return { writes: [{ streamId, events }, ...revocations], result: { revoked: revocations.length } };
    },
    metadata,
  );
  await deps.settle?.();
  return result;
}

/**
 * Registers an application under a client id and secret the caller chose (the
 * portal's own client at the identity service of the same process), unless it
 * is registered already with exactly them: safe to run at every start, by every
 * instance at once (the loser of a race finds the winner's registration).
 * Throws `Conflict` when the id is taken otherwise (deregistered, other secret).
 */
export async function ensureOAuthClient(
  deps: OidcStorageDeps,
  input: NewOAuthClient & { client_id: string; client_secret: string },
  metadata: EventMetadata,
): Promise<'registered' | 'present'> {
  const streamId = oauthClientStream(input.client_id);
  const client = {
    client_id: input.client_id,
    name: input.name,
    redirect_uris: input.redirect_uris,
    confidential: input.confidential,
    secret_sha256: sha256Hex(input.client_secret),
  };
  const state = async () => fold(oauthClientDecider, (await deps.store.readStream(streamId)) as unknown as OAuthClientEvent[]);
  const same = (s: Awaited<ReturnType<typeof state>>) =>
    s.status === 'Registered' && s.client.secret_sha256 === client.secret_sha256 && s.client.redirect_uris.join('\n') === client.redirect_uris.join('\n');
  if (same(await state())) return 'present';
  try {
    await handleCommand(deps.store, streamId, oauthClientDecider, { type: 'RegisterOAuthClient', client, now: deps.now() }, metadata);
  } catch (err) {
    if (!(err instanceof Conflict) || !same(await state())) throw err;
    return 'present';
  }
  await deps.settle?.();
  return 'registered';
}
