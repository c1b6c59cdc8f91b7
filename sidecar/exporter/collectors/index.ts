import type { CollectorSource } from '../config/load.js';
import { databaseCollectors } from './database.js';
import { pgbouncerCollectors } from './pgbouncer.js';
import { replicationCollectors } from './replication.js';
import { serverCollectors } from './server.js';
import { walCollectors } from './wal.js';

/**
 * Keelson's own default collector set, used when --config is not given. The YAML lives in
 * TypeScript modules so that it ships inside the compiled output without a copy step; it is
 * ordinary pg_exporter YAML and goes through the same loader as a user's files. The exporter
 * process reads it in parsed form (builtin-docs.generated.ts, `npm run collectors`).
 */
export function builtinCollectorSources(): CollectorSource[] {
  return [serverCollectors, replicationCollectors, walCollectors, databaseCollectors, pgbouncerCollectors];
}

export { builtinOrigin } from './origin.js';
