import type { Server } from 'node:http';
import type { Express } from 'express';
import { SignJWT } from 'jose';
import { SESSION_AUDIENCE, SESSION_TTL_SECONDS, subjectOf, issueSession, type AuthMethod, type SessionGrant } from '../../commands/identity/sessions.js';
import { createIdentityApp } from '../../http/identity/app.js';
import { createRegistryApp } from '../../http/registry/app.js';
import { migrate } from '../../infra/db/migrate.js';
import { currentSigningKey } from '../../infra/identity/keys.js';
import { registryMigrations } from '../../infra/registry/store.js';
import { RegistrySyncer } from '../../infra/registry/sync.js';
import { api } from './http.js';
import { freePort } from './ports.js';
import { RegistryRepo, registryEnv, writeBaseRegistry } from './registry.js';
import { createTestSystem, type TestSystem } from './system.js';

export const REGISTRY_TOKEN = 'registry-service-token-for-identity-specs';
export const KEY_SECRET = 'identity-key-secret-for-the-specs';

/** Starts an app on a given loopback port (the issuer URL must name the port before the app listens). */
export async function listenOn(app: Express, port: number): Promise<{ url: string; close(): Promise<void> }> {
  const server = await new Promise<Server>((resolve, reject) => {
    const s = app.listen(port, '127.0.0.1', (err?: Error) => (err ? reject(err) : resolve(s)));
  });
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

export interface IdentityFixture {
  sys: TestSystem;
  repo: RegistryRepo;
  /** `http://localhost:<port>`: the issuer, the WebAuthn origin and RP id `localhost`. */
  issuer: string;
  /** The same service by address (Node's fetch need not resolve `localhost`). */
  url: string;
  client: ReturnType<typeof api>;
  /** Commits the registry repository and loads it into the replica. */
  sync(): Promise<void>;
  /** Stops the registry replica's HTTP server (its clients then see 503). */
  stopRegistry(): Promise<void>;
  close(): Promise<void>;
}

/**
 * The identity service on `http://localhost:<port>` over a registry replica of
 * the base spec registry (AS4242420001: ALPHA-MNT and BETA-MNT; AS4242420002:
 * BETA-MNT), on a fresh database with the test clock.
 */
export async function startIdentity(env: Record<string, string> = {}): Promise<IdentityFixture> {
  const repo = writeBaseRegistry(new RegistryRepo());
  repo.commit('base');
  const registryPort = await freePort();
  const identityPort = await freePort();
  const issuer = `http://localhost:${identityPort}`;
  const sys = await createTestSystem({
    env: registryEnv(repo.dir, {
      REGISTRY_SERVICE_TOKEN: REGISTRY_TOKEN,
      REGISTRY_URL: `http://127.0.0.1:${registryPort}`,
      IDENTITY_ISSUER: issuer,
      IDENTITY_KEY_SECRET: KEY_SECRET,
      ...env,
    }),
  });
  await migrate(sys.pool, [registryMigrations]);
  const syncer = new RegistrySyncer(sys.context);
  await syncer.sync();
  let registry: { close(): Promise<void> } | undefined = await listenOn(createRegistryApp(sys.context, { syncer }), registryPort);
  const identity = await listenOn(createIdentityApp(sys.context), identityPort);
  return {
    sys,
    repo,
    issuer,
    url: identity.url,
    client: api(identity.url),
    async sync() {
      repo.commit('change');
      await syncer.sync();
    },
    async stopRegistry() {
      await registry?.close();
      registry = undefined;
    },
    async close() {
      await identity.close();
      await registry?.close();
      await sys.close();
      repo.destroy();
    },
  };
}

/** A real session grant, as challenge submit or passkey login would issue it. */
export function grantFor(sys: TestSystem, mntner: string, asn: number, method: AuthMethod = 'ssh'): Promise<SessionGrant> {
  return issueSession(sys.context, { asn, mntner, method });
}

/**
 * A token signed with the service's current key but with claims of the test's
 * choosing (e.g. without `mnt`), for paths a real grant never takes.
 */
export async function mintSession(sys: TestSystem, claims: Record<string, unknown>, options: { issuer?: string; audience?: string } = {}): Promise<string> {
  const now = sys.clock.now();
  const key = await currentSigningKey(sys.pool, sys.config, now);
  const iat = Math.floor(now.getTime() / 1000);
  return new SignJWT(claims)
    .setProtectedHeader({ alg: 'EdDSA', typ: 'JWT', kid: key.kid })
    .setJti(`spec-${iat}-${Math.random()}`)
    .setIssuer(options.issuer ?? sys.config.identityIssuer)
    .setAudience(options.audience ?? SESSION_AUDIENCE)
    .setIssuedAt(iat)
    .setExpirationTime(iat + SESSION_TTL_SECONDS)
    .sign(key.privateKey);
}

export { subjectOf };
