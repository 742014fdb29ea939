import type { DomainEvent } from '../decider.js';
import { Conflict, NotFound, Validation, type FieldError } from '../errors.js';

/**
 * OAuth applications (document 1, OAuth application): one stream per client,
 * `oauth-client-<client_id>`. Registration keeps only the sha256 of a
 * confidential client's secret; deregistration is final (the id is never reused).
 */

export interface OAuthClientRecord {
  client_id: string;
  name: string;
  redirect_uris: string[];
  confidential: boolean;
  /** Lowercase hex sha256 of the secret; null for public clients. */
  secret_sha256: string | null;
  registered_at: string;
}

export type OAuthClientRegistered = DomainEvent<'OAuthClientRegistered', OAuthClientRecord>;
export type OAuthClientDeregistered = DomainEvent<'OAuthClientDeregistered', { client_id: string; at: string }>;
export type OAuthClientEvent = OAuthClientRegistered | OAuthClientDeregistered;

export const OAUTH_CLIENT_EVENTS: readonly OAuthClientEvent['type'][] = ['OAuthClientRegistered', 'OAuthClientDeregistered'];

export const oauthClientStream = (clientId: string): string => `oauth-client-${clientId}`;

export type OAuthClientState = { status: 'Empty' } | { status: 'Registered'; client: OAuthClientRecord } | { status: 'Deregistered'; clientId: string };

export type OAuthClientCommand =
  { type: 'RegisterOAuthClient'; client: Omit<OAuthClientRecord, 'registered_at'>; now: Date } | { type: 'DeregisterOAuthClient'; clientId: string; now: Date };

export const unknownOAuthClient = (clientId: string) => new NotFound(`unknown oauth client ${clientId}`);

export const oauthClientDecider = {
  initialState: (): OAuthClientState => ({ status: 'Empty' }),
  evolve(state: OAuthClientState, event: OAuthClientEvent): OAuthClientState {
    switch (event.type) {
      case 'OAuthClientRegistered':
        return { status: 'Registered', client: event.data };
      case 'OAuthClientDeregistered':
        return { status: 'Deregistered', clientId: event.data.client_id };
      default: {
        const _never: never = event;
        return _never;
      }
    }
  },
  decide(command: OAuthClientCommand, state: OAuthClientState): OAuthClientEvent[] {
    switch (command.type) {
      case 'RegisterOAuthClient':
        if (state.status !== 'Empty') throw new Conflict(`oauth client ${command.client.client_id} already exists`);
        checkRedirectUris(command.client.redirect_uris);
        return [{ type: 'OAuthClientRegistered', data: { ...command.client, registered_at: command.now.toISOString() } }];
      case 'DeregisterOAuthClient':
        if (state.status !== 'Registered') throw unknownOAuthClient(command.clientId);
        return [{ type: 'OAuthClientDeregistered', data: { client_id: command.clientId, at: command.now.toISOString() } }];
      default: {
        const _never: never = command;
        return _never;
      }
    }
  },
};

const LOOPBACK_HOSTS = new Set(['127.0.0.1', '[::1]', 'localhost']);

/**
 * Why a redirect URI may not be registered, or undefined when it may: an
 * absolute https URI, or plain http to a loopback host (a native app's local
 * listener); no fragment (RFC 6749 §3.1.2) and no credentials. Matching at
 * authorization time is exact, string for string, so the URI is kept as given.
 */
export function redirectUriProblem(uri: string): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(uri);
  } catch {
    return 'not an absolute URI';
  }
  if (uri.includes('#')) return 'must not have a fragment';
  if (parsed.username || parsed.password) return 'must not carry credentials';
  if (parsed.protocol === 'https:') return undefined;
  if (parsed.protocol === 'http:' && LOOPBACK_HOSTS.has(parsed.hostname)) return undefined;
  if (parsed.protocol === 'http:') return 'plain http is allowed only for loopback (127.0.0.1, [::1], localhost)';
  return 'must use https';
}

/** At least one URI, none twice, each allowed by `redirectUriProblem` (422 naming each bad one). */
export function checkRedirectUris(uris: readonly string[]): void {
  const errors: FieldError[] = [];
  if (uris.length === 0) errors.push({ loc: ['body', 'redirect_uris'], msg: 'at least one redirect URI is required', type: 'value_error' });
  uris.forEach((uri, i) => {
    const problem = redirectUriProblem(uri) ?? (uris.indexOf(uri) !== i ? 'listed twice' : undefined);
    if (problem) errors.push({ loc: ['body', 'redirect_uris', i], msg: `invalid redirect_uri ${uri}: ${problem}`, type: 'value_error' });
  });
  if (errors.length) throw new Validation(errors[0].msg, errors);
}
