import { fileURLToPath } from 'node:url';
import type { MigrationSet } from '../db/migrate.js';

/** Telemetry tables: liveness registry, time-series samples, latest reports, flap tables. Not events, not rebuilt. */
export const telemetryMigrations: MigrationSet = { name: 'telemetry', dir: fileURLToPath(new URL('./migrations', import.meta.url)) };
