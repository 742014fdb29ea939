import { accountsProjection } from './accounts/projection.js';
import { agentsProjection } from './agents/projection.js';
import { autopeeringProjection } from './autopeering/projection.js';
import { auditLogProjection } from './audit-log/projection.js';
import { dnsProjection } from './dns/projection.js';
import { fleetProjection } from './fleet/projection.js';
import { nodeStatusProjection } from './node-status/projection.js';
import { oidcProjection } from './oidc/projection.js';
import { notifyChannelsProjection } from './notify/projection.js';
import { flapAlertsProjection } from './flap-alerts/projection.js';
import { sessionFlapsProjection } from './session-flaps/projection.js';
import type { Projection } from './runtime/projection.js';

/** Every read model of the system. A new projection is added here. */
export const allProjections: readonly Projection[] = [
  auditLogProjection,
  fleetProjection,
  accountsProjection,
  agentsProjection,
  nodeStatusProjection,
  sessionFlapsProjection,
  flapAlertsProjection,
  oidcProjection,
  autopeeringProjection,
  dnsProjection,
  notifyChannelsProjection,
];
