import { randomBytes } from 'node:crypto';
import type { Config } from '../infra/config.js';
import type { Role } from './system.js';

/**
 * When one process serves both the identity service and the registry replica
 * and `REGISTRY_URL` is not set, the identity service uses the replica next to
 * it: `REGISTRY_URL` becomes the replica's own address and, without a
 * `REGISTRY_SERVICE_TOKEN`, both share a random token that lives as long as the
 * process. Without this, `npm start` would answer every registry lookup with
 * 503. Explicit settings always win; with other role sets nothing changes.
 */
export function withLocalRegistry(config: Config, roles: ReadonlySet<Role>): Config {
  if (config.registryUrl !== undefined || !roles.has('identity') || !roles.has('registry')) return config;
  const host = ['0.0.0.0', '::', ''].includes(config.bindHost) ? '127.0.0.1' : config.bindHost;
  const authority = host.includes(':') ? `[${host}]` : host;
  return {
    ...config,
    registryUrl: `http://${authority}:${config.registryPort}`,
    registryServiceToken: config.registryServiceToken ?? randomBytes(32).toString('base64url'),
  };
}
