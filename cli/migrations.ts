import { commandMigrations } from '../commands/ids.js';
import { agentHubMigrations } from '../infra/agent-hub/presence.js';
import { releaseMigrations } from '../infra/releases/store.js';
import type { MigrationSet } from '../infra/db/migrate.js';
import { eventStoreMigrations } from '../infra/eventstore/postgres/store.js';
import { jobMigrations } from '../infra/jobs/store.js';
import { telemetryMigrations } from '../infra/telemetry/migrations.js';
import { rateLimitMigrations } from '../infra/rate-limit.js';
import { signingKeyMigrations } from '../infra/identity/keys.js';
import { portalMigrations } from '../infra/portal/sessions.js';
import { notifyMigrations } from '../infra/notify/outbox.js';

/**
 * Tables that are neither events nor projections (rebuilt from events):
 * id sequences, telemetry samples, rate-limit counters, release files, keys, portal sessions, the notification outbox.
 * Applied, in this order, before the projections' own sets by `serve` and by
 * the test system. A module with tables of this kind adds its set here.
 */
export const stateMigrations: readonly MigrationSet[] = [
  eventStoreMigrations,
  commandMigrations,
  rateLimitMigrations,
  telemetryMigrations,
  agentHubMigrations,
  releaseMigrations,
  signingKeyMigrations,
  portalMigrations,
  jobMigrations,
  notifyMigrations,
];
