import type { Express } from 'express';
import { serve, type RunningServer } from '../lib/http.js';
import type { Logger } from '../lib/log.js';
import { parseListenAddress } from '../lib/ports.js';
import { buildApp } from './app.js';
import { createAuthenticator } from './auth/authenticate.js';
import { createPrincipalStore, trackedKeyPrefixes } from './auth/principals.js';
import { createSessions } from './auth/sessions.js';
import { createKv } from './cache/kv.js';
import { createKeyTracker } from './cache/tracking.js';
import { ClientPages } from './db/client-pages.js';
import { checkSecret, type AdminConfig } from './config.js';
import { createAudit } from './resources/audit.js';
import { createIdCodec } from './resources/ids.js';
import { createRequestMetrics } from './http/monitoring.js';
import { createPasswordHasher } from './auth/passwords.js';
import { createRateLimiter } from './http/rate-limit.js';
import type { MountedRoute } from './http/router.js';
import { createTokenService } from './auth/tokens.js';
import { migrate } from './db/migrate.js';
import { adminMigrations } from './db/migrations/index.js';
import { createPool } from './db/pool.js';
import { reconcileApis } from './db/reconcile.js';
import { seedIfEmpty, type SeedResult } from './db/seed.js';
import { createAuthRouter } from './modules/auth/index.js';
import { loadBusinessModules } from './modules/business/loader.js';
import { createRouteRouter } from './modules/route/index.js';
import { createSystemManageRouter } from './modules/system-manage/index.js';
import type { AdminServices } from './services.js';

export interface AdminInstance {
  server: RunningServer;
  app: Express;
  services: AdminServices;
  routes: MountedRoute[];
  seed: SeedResult;
  close(): Promise<void>;
}

export interface StartOptions {
  handleSignals?: boolean;
}

export function createServices(config: AdminConfig, logger: Logger): AdminServices {
  const db = createPool(config.databaseUrl, { pipelineConnections: config.dbPipelineConnections });
  const kv = createKv(config.redisUrl, logger.child({ component: 'redis' }), config.redisTimeoutMs);
  const tokens = createTokenService({
    secretKey: config.secretKey,
    algorithm: config.jwtAlgorithm,
    accessTokenMinutes: config.accessTokenMinutes,
    refreshTokenMinutes: config.refreshTokenMinutes,
  });
  const tracker = createKeyTracker(config.redisUrl, kv, trackedKeyPrefixes, logger.child({ component: 'redis-tracking' }));
  const principals = createPrincipalStore(db, kv, logger, tracker);
  const sessions = createSessions(db, kv, principals, logger);
  return {
    config,
    logger,
    db,
    kv,
    ids: createIdCodec(config.secretKey),
    tokens,
    passwords: createPasswordHasher({ memoryCost: config.argon2MemoryKib, timeCost: config.argon2TimeCost, parallelism: config.argon2Parallelism }),
    principals,
    sessions,
    authenticator: createAuthenticator(tokens, principals, logger),
    audit: createAudit(logger),
    loginLimiter: createRateLimiter(config.loginLimitWindowSeconds),
    metrics: createRequestMetrics(),
    clientPages: new ClientPages(),
  };
}

/** Waits briefly for Redis; start-up goes on without it (requests degrade as the spec says). */
async function waitForKv(services: AdminServices, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (!services.kv.isReady() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  return services.kv.isReady();
}

/** Migrates, mounts every router, reconciles the API table, seeds an empty database and listens. */
export async function startAdmin(config: AdminConfig, logger: Logger, options: StartOptions = {}): Promise<AdminInstance> {
  const problem = checkSecret(config);
  if (problem?.level === 'fatal') throw new Error(problem.message);
  if (problem) logger.warn(problem.message);

  const services = createServices(config, logger);
  try {
    await migrate(services.db, adminMigrations, logger);
    const routers = [
      createAuthRouter(services),
      createRouteRouter(services),
      createSystemManageRouter(services),
      ...(await loadBusinessModules(services, config.businessModulesDir)),
    ];
    const { app, routes } = buildApp(services, routers);
    await reconcileApis(services.db, routes, logger);
    const seed = await seedIfEmpty(
      services.db,
      services.passwords,
      { initialUsername: config.initialUsername, initialPassword: config.initialPassword },
      logger,
    );
    // Every (re)connection copies the durable session versions into Redis.
    services.kv.onReady(() => void services.sessions.syncToKv().catch((e: Error) => logger.warn({ err: e.message }, 'session version sync failed')));
    if (await waitForKv(services, 2000)) await services.sessions.syncToKv().catch((e: Error) => logger.warn({ err: e.message }, 'session version sync failed'));
    else logger.warn('redis not reachable at start-up; session version checks are skipped until it is');
    const { host, port } = parseListenAddress(config.listen);
    const server = await serve(app, { host, port, logger, handleSignals: options.handleSignals });
    const close = async (): Promise<void> => {
      await server.close();
      await services.principals.close();
      await services.kv.close();
      await services.db.end();
    };
    return { server, app, services, routes, seed, close };
  } catch (error) {
    await services.principals.close().catch(() => undefined);
    await services.kv.close().catch(() => undefined);
    await services.db.end().catch(() => undefined);
    throw error;
  }
}
