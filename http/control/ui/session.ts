import { Type } from '@sinclair/typebox';
import { HEARTBEAT_INTERVAL_SECONDS } from '../../../domain/agent/heartbeat.js';
import { targetVersionCache } from '../../../infra/releases/target-cache.js';
import { LIVENESS_THRESHOLDS } from '../../../infra/telemetry/liveness.js';
import { projectVersion } from '../../../infra/version.js';
import type { ServiceContext } from '../../shared/context.js';
import { ApiRouter } from '../../shared/routes.js';
import { principalOf } from '../auth/require-admin.js';
import { servedFeatures } from './features.js';

const SessionSchema = Type.Object({
  authenticated: Type.Literal(true),
  scope: Type.Literal('admin'),
  server_version: Type.String(),
  agent_target_version: Type.Union([Type.String(), Type.Null()], { description: 'the target this instance knows (refreshed within 30 s); null: none set' }),
  heartbeat_interval_seconds: Type.Integer(),
  liveness_thresholds: Type.Object({ online_seconds: Type.Integer(), stale_seconds: Type.Integer() }),
  features: Type.Array(Type.String()),
  identity: Type.Object({ username: Type.String(), kind: Type.Union([Type.Literal('user'), Type.Literal('static-token')]) }),
});

/**
 * `GET /ui/session`: who is signed in and what this server serves, without a
 * database lookup (the `/ui` guard has already resolved the credential). The
 * agent target comes from the instance's kept copy; a read that finds it old
 * refreshes it in the background for the next one.
 */
export function sessionRoutes(ctx: ServiceContext): ApiRouter {
  const serverVersion = projectVersion();
  const features = servedFeatures(ctx.config);
  const target = targetVersionCache(ctx.pool);
  const refresh = () => {
    ctx.background
      .run(target.refresh())
      .catch((err: unknown) => ctx.log.warn({ err }, 'agent target version refresh failed; the session keeps the last known'));
  };
  refresh();
  return new ApiRouter('/control/v1').route({
    method: 'get',
    path: '/ui/session',
    summary: 'session info: identity, versions, heartbeat interval, liveness thresholds and the features this server serves',
    tags: ['console'],
    security: ['admin'],
    responses: { 200: SessionSchema, 401: 'missing or invalid token', 403: 'admin surface locked' },
    handler: (_req, res) => {
      if (target.due) refresh();
      const principal = principalOf(res);
      const identity =
        principal?.kind === 'account' ? { username: principal.username, kind: 'user' as const } : { username: 'admin', kind: 'static-token' as const };
      res.json({
        authenticated: true,
        scope: 'admin',
        server_version: serverVersion,
        agent_target_version: target.current,
        heartbeat_interval_seconds: HEARTBEAT_INTERVAL_SECONDS,
        liveness_thresholds: { ...LIVENESS_THRESHOLDS },
        features,
        identity,
      });
    },
  });
}
