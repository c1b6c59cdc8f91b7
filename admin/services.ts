import type { Logger } from '../lib/log.js';
import type { Authenticator } from './auth/authenticate.js';
import type { PrincipalStore } from './auth/principals.js';
import type { Sessions } from './auth/sessions.js';
import type { Kv } from './cache/kv.js';
import type { AdminConfig } from './config.js';
import type { Audit } from './resources/audit.js';
import type { IdCodec } from './resources/ids.js';
import type { RequestMetrics } from './http/monitoring.js';
import type { PasswordHasher } from './auth/passwords.js';
import type { RateLimiter } from './http/rate-limit.js';
import type { TokenService } from './auth/tokens.js';
import type { Db } from './db/pool.js';
import type { ClientPages } from './db/client-pages.js';

/** Everything a module needs, built once at start-up and passed down explicitly. */
export interface AdminServices {
  config: AdminConfig;
  logger: Logger;
  db: Db;
  kv: Kv;
  ids: IdCodec;
  tokens: TokenService;
  passwords: PasswordHasher;
  principals: PrincipalStore;
  sessions: Sessions;
  authenticator: Authenticator;
  audit: Audit;
  loginLimiter: RateLimiter;
  metrics: RequestMetrics;
  /** Module pages the front end has no view for (db/client-pages.ts). */
  clientPages: ClientPages;
}
