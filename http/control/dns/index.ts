import type { ServiceContext } from '../../shared/context.js';
import type { ApiRouter } from '../../shared/routes.js';
import { dnsGroupRoutes } from './groups.js';
import { nodeDnsGroupRoutes } from './membership.js';
import { dnsRecordRoutes } from './records.js';
import { dnsZoneRoutes } from './zones.js';

/** Every DNS route of the administration API (document 2, "DNS"). */
export function dnsRoutes(ctx: ServiceContext): ApiRouter[] {
  return [dnsGroupRoutes(ctx), dnsZoneRoutes(ctx), dnsRecordRoutes(ctx), nodeDnsGroupRoutes(ctx)];
}
