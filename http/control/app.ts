import type { Express } from 'express';
import { leanAccessLog } from '../shared/access-log.js';
import { createServiceApp, finishServiceApp } from '../shared/app.js';
import { auditWrites } from '../shared/audit.js';
import { readsOf, type ServiceContext } from '../shared/context.js';
import { healthz } from '../shared/healthz.js';
import { referenceRoutes } from '../shared/reference.js';
import { ApiRouter, openApiDocument } from '../shared/routes.js';
import { auditLogRoutes } from './audit-log.js';
import { agentTokenRoutes } from './agent/tokens.js';
import { agentRegisterRoutes } from './agent/register.js';
import { requireAdmin } from './auth/require-admin.js';
import { controlAuthRoutes } from './auth/routes.js';
import { generationRoutes } from './fleet/generations.js';
import { interfaceRoutes } from './fleet/interfaces.js';
import { nodeRoutes } from './fleet/nodes.js';
import { peeringRoutes } from './fleet/peerings.js';
import { asNames, registryClient } from '../../infra/registry/client.js';
import { httpRoaSource, type RoaSource } from '../../infra/registry/roa-source.js';
import { agentRoaRoutes } from './agent/roas.js';
import { controlHealthRoutes } from './health.js';
import { registryProxyRoutes } from './ui/registry.js';
import { consoleViewRoutes } from './ui/routes.js';
import { internalTopologyRoutes } from './ui/internal-topology.js';
import { peerDefaultsRoutes } from './ui/peer-defaults.js';
import { routeTuningRoutes } from './ui/route-tuning.js';
import { agentDesiredStateRoutes } from './agent/desired-state.js';
import { agentRecoveryKeyRoutes } from './agent/recovery-key.js';
import { AGENT_REPORT_PATHS, agentReportRoutes } from './agent/reports.js';
import { agentWireguardKeyRoutes } from './agent/wireguard-keys.js';
import { healthRoutes } from './health/routes.js';
import { routingRoutes } from './routing/routes.js';
import { uiPrefixFlapRoutes } from './ui/prefix-flaps.js';
import { uiFlapPeerRoutes } from './ui/flap-peers.js';
import { uiRoutingRoutes } from './ui/routing.js';
import { withSockets } from './sockets.js';
import { notifyRoutes } from './fleet/notify.js';
import { releaseRoutes } from './releases.js';
import { agentUpdateRoutes } from './agent/update.js';
import { probeRoutes } from './probes/routes.js';
import { fleetOpsRoutes } from './fleet-ops/routes.js';
import { autopeeringAdminRoutes } from './autopeering/routes.js';
import { publicCors } from './public/cors.js';
import { publicRoutes } from './public/routes.js';
import { dnsRoutes } from './dns/index.js';
import { adminTrafficRoutes } from './health/traffic.js';
import { nodesMetricsRoutes } from './ui/nodes-metrics.js';
import { trafficRoutes } from './ui/traffic.js';
import { dashboardRoutes } from './ui/dashboard.js';
import { serviceMetrics } from '../shared/metrics.js';
import { AgentMetrics } from '../../infra/metrics/agents.js';
import { controlGauges } from './metrics.js';
import { appPageRoutes } from './pages.js';
import { portalGate } from './portal/auth.js';
import { portalRoutes, type PortalOptions } from './portal/routes.js';
import { adminNotificationRoutes } from './notifications/routes.js';

export const CONTROL_PREFIX = '/control/v1';

/** The control server: admin API, agent channel, console layer, portal API, public data. */
export interface ControlAppOptions {
  /**
   * Where `/agent/roas` gets the ROA set. Default: the replica at `REGISTRY_URL`
   * when configured, else none (404). The composition root passes the replica's
   * own tables when this process serves the registry too.
   */
  roaSource?: RoaSource | null;
  /** The portal login: the local identity service's client when this process serves it too (`npm start`). */
  portal?: PortalOptions;
}

export function createControlApp(ctx: ServiceContext, options: ControlAppOptions = {}): Express {
  // The cached anonymous GETs answer ahead of pino-http, the body parser and the other routers (bench/README.md, public-map).
  // The views that tolerate lag read from the replica of DATABASE_READ_URL (issue 30); writes and authentication stay on ctx.
  const reads = readsOf(ctx);
  const publicApi = publicRoutes(reads);
  // So do the agents' desired-state pulls: a fleet-wide write makes every agent pull at once (bench/README.md, fanout).
  const desiredState = agentDesiredStateRoutes(ctx);
  // And the agents' reports, about 70 a second for 1,000 nodes (bench/README.md, telemetry-ingest, fourth pass).
  const reports = agentReportRoutes(ctx);
  const metrics = serviceMetrics(ctx, 'control');
  const agentMetrics = new AgentMetrics(metrics.service.registry, ctx.log);
  controlGauges(ctx, reads, metrics.service.registry);
  const app = createServiceApp('control', ctx.log, {
    metrics,
    trustedProxies: ctx.config.trustedProxies,
    front: (front, log) => {
      front.use(`${CONTROL_PREFIX}/public`, leanAccessLog(log), publicCors());
      front.use(CONTROL_PREFIX, publicApi.router);
      front.use(`${CONTROL_PREFIX}/agent/desired-state`, leanAccessLog(log));
      front.use(CONTROL_PREFIX, desiredState.router);
      front.use(
        AGENT_REPORT_PATHS.map((path) => CONTROL_PREFIX + path),
        leanAccessLog(log),
      );
      front.use(CONTROL_PREFIX, reports.router);
    },
  });
  app.get('/healthz', healthz(ctx.pool));
  app.use(referenceRoutes(CONTROL_PREFIX));
  app.use(appPageRoutes());

  // Audit runs before authentication so that refused writes carry their status code.
  const admin = requireAdmin(ctx);
  app.use(`${CONTROL_PREFIX}/admin`, auditWrites(ctx), admin);
  // The console's configuration writes (route tuning, link latency) are audited as /admin writes are.
  app.use([`${CONTROL_PREFIX}/ui/nodes`, `${CONTROL_PREFIX}/ui/bgp-sessions`], auditWrites(ctx));
  app.use(`${CONTROL_PREFIX}/ui`, admin);
  // The portal is its own trust domain: portal session tokens only (never admin credentials), login routes open.
  app.use(`${CONTROL_PREFIX}/autopeering`, auditWrites(ctx), portalGate(ctx));

  const routers: ApiRouter[] = [
    controlHealthRoutes(),
    controlAuthRoutes(ctx),
    auditLogRoutes(ctx),
    nodeRoutes(ctx),
    peeringRoutes(ctx, (asns) => namesOrNothing(ctx, asns)),
    interfaceRoutes(ctx),
    generationRoutes(ctx),
    registryProxyRoutes(ctx),
    ...consoleViewRoutes(reads),
    routeTuningRoutes(ctx),
    peerDefaultsRoutes(ctx),
    internalTopologyRoutes(reads),
    probeRoutes(ctx),
    agentTokenRoutes(ctx),
    agentRegisterRoutes(ctx),
    agentRecoveryKeyRoutes(ctx),
    agentWireguardKeyRoutes(ctx),
    reports,
    agentRoaRoutes(ctx, options.roaSource !== undefined ? options.roaSource : replicaRoaSource(ctx)),
    healthRoutes(ctx),
    adminTrafficRoutes(ctx),
    trafficRoutes(reads),
    nodesMetricsRoutes(reads),
    dashboardRoutes(reads),
    routingRoutes(ctx),
    uiRoutingRoutes(reads),
    uiPrefixFlapRoutes(reads),
    uiFlapPeerRoutes(reads),
    notifyRoutes(ctx),
    releaseRoutes(ctx),
    agentUpdateRoutes(ctx),
    fleetOpsRoutes(ctx),
    autopeeringAdminRoutes(ctx),
    adminNotificationRoutes(ctx),
    ...dnsRoutes(ctx),
    ...portalRoutes(ctx, options.portal),
  ];
  // The reports are mounted in front; listed here, they keep their place in the OpenAPI document.
  for (const r of routers) if (r !== reports) app.use(CONTROL_PREFIX, r.router);
  routers.push(publicApi, desiredState);

  const document = openApiDocument(
    {
      title: 'dn42-control control server',
      version: '1',
      errorStyle: 'control',
      securitySchemes: {
        admin: { type: 'http', scheme: 'bearer', description: 'static admin token or account session token' },
        agent: { type: 'http', scheme: 'bearer', description: 'agent token bound to one node' },
        portal: { type: 'http', scheme: 'bearer', description: 'portal session token (opaque; from POST /autopeering/auth/exchange)' },
        identity: { type: 'http', scheme: 'bearer', description: 'identity-service session JWT (verified against its JWKS)' },
      },
    },
    routers,
  );
  app.get(`${CONTROL_PREFIX}/openapi.json`, (_req, res) => {
    res.json(document);
  });
  return withSockets(finishServiceApp(app, 'control', ctx.log), ctx, agentMetrics);
}

/** Peering lists never fail for want of names: any replica trouble leaves `remote_as_name` null. */
async function namesOrNothing(ctx: ServiceContext, asns: readonly number[]): Promise<ReadonlyMap<number, string>> {
  try {
    return (await asNames(ctx.config, asns, ctx.log)) ?? new Map();
  } catch (err) {
    ctx.log.warn({ err }, 'registry names unavailable; remote_as_name left null');
    return new Map();
  }
}

/** The replica at `REGISTRY_URL`, or none when it is not configured. */
function replicaRoaSource(ctx: ServiceContext): RoaSource | null {
  const client = registryClient(ctx.config, ctx.log);
  return client.configured ? httpRoaSource(client, ctx.log) : null;
}
