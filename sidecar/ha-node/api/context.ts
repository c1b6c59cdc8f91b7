import type { Router } from 'express';
import type { Logger } from '../../../lib/log.js';
import type { ApiCredentials } from '../../../api/ha-node/credentials.js';
import type { Dcs } from '../dcs/types.js';
import type { HaLoop } from '../ha/loop.js';
import type { NodeSnapshot } from '../ha/snapshot.js';
import type { PostgresInstance } from '../postgres/instance.js';
import type { BackupKeeper } from '../backup/keeper.js';
import type { PoolerFleet } from '../pooler/fleet.js';
import type { ManagedKeeper } from '../managed/keeper.js';
import type { LiveWal } from './live-wal.js';
import type { ServerAlive } from './server-alive.js';
import type { CertificateFile } from './certificate-metrics.js';
import type { PeerApiTls } from '../ha/peer-api.js';
import type { VerifyClient } from './api-tls.js';

/** What route modules may use. Mutating modules get the same context. */
export interface ApiContext {
  snapshot(): NodeSnapshot;
  dcs: Dcs;
  logger: Logger;
  /** Wakes the HA loop so it acts on a change now rather than after loop_wait. */
  wake(reason: string): void;
  loop?: HaLoop;
  pg?: PostgresInstance;
  /** Reads WAL positions at request time for the node document; absent: the loop's snapshot. */
  liveWal?: LiveWal;
  /** Whether the postmaster runs now (health checks); absent: the loop's snapshot decides. */
  serverAlive?: ServerAlive;
  /** The TLS certificate files whose remaining lifetime GET /metrics reports; none without TLS. */
  certificates?: CertificateFile[];
  /** PostgreSQL serves TLS and every remote session must use it: PATCH /config holds pg_hba lines to that. */
  requireTls?: boolean;
  /** pgBackRest (GET/POST /backup); undefined when backups are off. */
  backup?: BackupKeeper;
  /** The cluster's poolers (GET /poolers); undefined or unconfigured: none. */
  poolers?: PoolerFleet;
  /** The read-only poolers (listed by GET /poolers with `readOnly: true`). */
  readOnlyPoolers?: PoolerFleet;
  /** The leader's keeper of spec.roles and Databases (GET /managed). */
  managed?: Pick<ManagedKeeper, 'report'>;
  /**
   * Credentials of the authenticated endpoints. Undefined: read from the environment when the
   * app is built (KEELSON_API_*); null: none (the endpoints stay open, as Patroni's without auth).
   */
  credentials?: ApiCredentials | null;
  /** How other members' APIs are verified when a route asks them (switchover eligibility). */
  peerTls?: PeerApiTls;
  /** Patroni's verify_client: optional or required, a mutating request needs a verified client certificate; absent: none. */
  verifyClient?: VerifyClient;
}

/** A group of routes; the app factory mounts modules in order, before the catch-all health route. */
export type ApiModule = (router: Router, context: ApiContext) => void;
