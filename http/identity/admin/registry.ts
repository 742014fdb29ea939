import { Type } from '@sinclair/typebox';
import { registryClient, RegistryRefused } from '../../../infra/registry/client.js';
import type { ServiceContext } from '../../shared/context.js';
import type { ApiRouter } from '../../shared/routes.js';
import { SyncResult } from '../../registry/schemas.js';
import { IDENTITY_ERROR, identityError } from '../errors.js';

const Status = Type.Object(
  {
    enabled: Type.Boolean({ description: 'false when the replica has no registry source' }),
    commit: Type.Union([Type.String(), Type.Null()], { description: 'commit identifier of the loaded registry' }),
    synced_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'when that commit was synced; null when never' }),
    counts: Type.Record(Type.String(), Type.Integer(), { description: 'objects per class' }),
    detail: Type.Union([Type.String(), Type.Null()], { description: 'why the replica has no data (never synced, no source), else null' }),
  },
  { description: 'registry replica status' },
);

/** What an empty replica means for sign-ins, and what to do about it. */
export function neverSynced(enabled: boolean): string {
  return enabled
    ? 'the registry replica has never synced: every ASN is unknown (404) until a sync succeeds; run one with POST /api/v1/registry/sync (dn42-control registry sync) or look at the replica log for the failing sync'
    : 'the registry replica has never synced and has no source: set REGISTRY_SOURCE (a dn42 registry checkout, or examples/registry for the made-up sample), then run dn42-control registry sync';
}

const WARN_EVERY_MS = 60_000;

/**
 * Says in the log, at most once a minute, that an ASN was unknown because the
 * replica has never synced (the answer itself stays the contract's 404). A
 * replica that cannot be asked is left to the caller's own error.
 */
export function emptyReplicaWarner(ctx: ServiceContext): () => Promise<void> {
  const client = registryClient(ctx.config, ctx.log);
  let last = -Infinity;
  return async () => {
    if (Date.now() - last < WARN_EVERY_MS) return;
    const status = await client.status().catch(() => undefined);
    if (status && status.commit === null) {
      last = Date.now();
      ctx.log.warn({ registryUrl: ctx.config.registryUrl }, neverSynced(status.enabled));
    }
  };
}

/**
 * `POST /registry/sync` (admin token) asks the registry replica this service
 * reads (REGISTRY_URL) for one sync round; the replica runs it exclusively with
 * its periodic loop. `GET /registry/status` passes on the replica's commit,
 * counts and sync time and nothing else.
 */
export function registryRoutes(router: ApiRouter, ctx: ServiceContext): void {
  const client = registryClient(ctx.config, ctx.log);
  router
    .route({
      method: 'post',
      path: '/registry/sync',
      summary: 'trigger one registry replica sync (force=1 skips the commit check)',
      tags: ['admin'],
      security: ['admin'],
      query: Type.Object({ force: Type.Optional(Type.String()) }),
      responses: {
        200: SyncResult,
        401: 'missing or invalid admin token',
        403: 'IDENTITY_ADMIN_TOKEN not configured',
        409: 'a sync is running or the replica cannot sync',
        503: 'replica unavailable',
      },
      handler: async (req, res) => {
        const force = req.validQuery.force === '1' || req.validQuery.force === 'true';
        try {
          res.json(await client.sync(force));
        } catch (err) {
          if (err instanceof RegistryRefused)
            throw identityError(err.status, err.detail, err.status === 409 ? IDENTITY_ERROR.conflict : IDENTITY_ERROR.unavailable);
          throw err;
        }
      },
    })
    .route({
      method: 'get',
      path: '/registry/status',
      summary: 'registry replica status: commit, per-class counts, sync time',
      tags: ['registry'],
      responses: { 200: Status, 503: 'replica unavailable' },
      handler: async (_req, res) => {
        const s = await client.status();
        res.json({ enabled: s.enabled, commit: s.commit, synced_at: s.synced_at, counts: s.counts, detail: s.commit === null ? neverSynced(s.enabled) : null });
      },
    });
}
