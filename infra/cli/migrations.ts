import { commandMigrations } from '../../commands/ids.js';
import { agentHubMigrations } from '../agent-hub/presence.js';
import { releaseMigrations } from '../releases/store.js';
import type { MigrationSet } from '../db/migrate.js';
import { eventStoreMigrations } from '../eventstore/postgres/store.js';
import { jobMigrations } from '../jobs/store.js';
import { telemetryMigrations } from '../telemetry/migrations.js';
import { rateLimitMigrations } from '../rate-limit.js';
import { signingKeyMigrations } from '../identity/keys.js';
import { portalMigrations } from '../portal/sessions.js';
import { notifyMigrations } from '../notify/outbox.js';

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
