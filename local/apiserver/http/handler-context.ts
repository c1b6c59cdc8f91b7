/** What the HTTP layer shares between its modules. */
import type { Logger } from '../../../lib/log.js';
import type { ApiCore } from '../api.js';
import type { FaultAdminCredentials } from '../faults/fault-admin.js';
import type { Faults } from '../faults/faults.js';
import type { OpenApiDocuments } from './openapi.js';
import type { TokenRegistry } from '../security/service-account-tokens.js';

export interface HandlerContext {
  core: ApiCore;
  openapi: OpenApiDocuments;
  faults: Faults;
  logger: Logger;
  bookmarkIntervalMs: number;
  defaultWatchTimeoutSeconds: number;
  /** Serves /_keelson/faults (test-only admin hook). */
  faultAdmin: boolean;
  /** Who may use the fault hook. */
  admin: FaultAdminCredentials;
  /** ServiceAccount tokens issued through TokenRequest, and whom they name. */
  tokens: TokenRegistry;
}

export interface Parsed {
  method: string;
  segments: string[];
  query: URLSearchParams;
  accept: string | undefined;
  contentType: string;
  userAgent: string | undefined;
}
