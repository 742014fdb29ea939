import type { IncomingMessage, ServerResponse } from 'node:http';
import Provider, { type KoaContextWithOIDC } from 'oidc-provider';
import { currentSigningKey } from '../../../infra/identity/keys.js';
import { lookUpAccountBeforeConsumption } from './account-before-consumption.js';
import { compareSecretsByDigest } from './clients.js';
import { providerConfiguration, PROVIDER_ROUTES, type ProviderDeps } from './configuration.js';
import { providerCors } from './cors.js';
import { contractDiscovery } from './discovery.js';
import { DATABASE_RETRY_AFTER_SECONDS, DATABASE_UNAVAILABLE, databaseOutage, isDatabaseUnavailable } from '../../shared/errors.js';

type Handler = (req: IncomingMessage, res: ServerResponse) => Promise<void>;

interface Built {
  kid: string;
  provider: Provider;
  handle: Handler;
}

/**
 * The oidc-provider instance for the key that signs now. The provider takes its
 * keys once, at construction; the key set lives in PostgreSQL and rotates
 * (`dn42-control identity rotate-keys`, any instance). So each use asks which
 * key is newest (one indexed query) and builds a new provider when it changed:
 * every ID token is then signed by the key the JWKS route publishes first.
 * Nothing else lives in a provider instance: its storage is the event store.
 */
/** Marks a provider request whose failure was the database's. */
const DATABASE_DOWN = 'dn42DatabaseDown';

export class OidcProviders {
  private built: Built | undefined;

  constructor(private readonly deps: ProviderDeps) {}

  /** The provider of the current signing key. */
  async current(): Promise<Provider> {
    return (await this.currentBuilt()).provider;
  }

  /** Serves one request to the provider (discovery, token, UserInfo). */
  async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    await (await this.currentBuilt()).handle(req, res);
  }

  private async currentBuilt(): Promise<Built> {
    const { pool, config, now } = this.deps;
    const key = await currentSigningKey(pool, config, now());
    if (this.built?.kid !== key.kid) this.built = this.build(key);
    return this.built;
  }

  private build(key: Awaited<ReturnType<typeof currentSigningKey>>): Built {
    const provider = new Provider(this.deps.config.identityIssuer, providerConfiguration(this.deps, key));
    compareSecretsByDigest(provider);
    lookUpAccountBeforeConsumption(provider, this.deps);
    provider.use(async (ctx, next) => {
      await next();
      if (ctx.status === 500 && ctx.state[DATABASE_DOWN]) {
        // The database, not the request, failed: 503 with Retry-After, as on every other route.
        ctx.status = 503;
        ctx.set('Retry-After', String(DATABASE_RETRY_AFTER_SECONDS));
        ctx.body = { error: 'temporarily_unavailable', error_description: DATABASE_UNAVAILABLE };
        return;
      }
      answerAsContract(ctx as KoaContextWithOIDC, this.deps.config.identityIssuer);
    });
    provider.use(providerCors(this.deps.pool));
    // The provider answers its own failures with a bare server_error: the cause goes to the log
    // (a database outage once per outage, and the answer becomes a 503 above).
    provider.on('server_error', (ctx: KoaContextWithOIDC, err: Error) => {
      if (isDatabaseUnavailable(err)) {
        ctx.state[DATABASE_DOWN] = true;
        const { first } = databaseOutage.note();
        if (first) this.deps.log.error({ err, path: ctx.path }, 'database unavailable: answering 503 until it is back (logged once per outage)');
        return;
      }
      this.deps.log.error({ err, path: ctx.path, requestId: (ctx.req as { id?: unknown }).id }, 'oidc-provider failed');
    });
    return { kid: key.kid, provider, handle: provider.callback() as unknown as Handler };
  }
}

/**
 * After the provider answered: discovery says exactly what the contract lists
 * (with every URL from the configured issuer, never the Host header), and a
 * token response echoes the access token's `audience` (the issuer unless a
 * `resource` was granted).
 */
function answerAsContract(ctx: KoaContextWithOIDC, issuer: string): void {
  const route = ctx.oidc?.route;
  if (route === 'discovery' && ctx.status === 200) ctx.body = contractDiscovery(ctx.body as Record<string, unknown>, issuer, PROVIDER_ROUTES);
  if (route === 'token' && ctx.status === 200 && ctx.body && typeof ctx.body === 'object') {
    const aud = ctx.oidc.entities.AccessToken?.aud;
    (ctx.body as Record<string, unknown>).audience = typeof aud === 'string' ? aud : issuer;
  }
}
