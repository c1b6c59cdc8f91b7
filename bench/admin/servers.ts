/**
 * The benchmark's server process: a bare express handler and the admin backend with its own
 * PostgreSQL and Redis. Run as a child of bench/admin.ts so autocannon does not share its event
 * loop; prints the targets as one JSON line and stops on SIGTERM.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import express from 'express';
import { loadAdminConfig } from '../../admin/config.js';
import { startAdmin } from '../../admin/server.js';
import { serve } from '../../lib/http.js';
import { createLogger } from '../../lib/log.js';
import { startPostgres } from '../../test/support/postgres.js';
import { startRedis } from '../../test/support/redis.js';
import type { ServerPids } from './cpu.js';

export const benchPassword = 'bench-password-1';

export interface Targets {
  bare: string;
  admin: string;
  superToken: string;
  userToken: string;
  pids: ServerPids;
}

export async function serveTargets(): Promise<void> {
  const pg = await startPostgres({ settings: { max_connections: 100 } });
  const redis = await startRedis();
  const logger = createLogger({ name: 'admin', level: 'warn' });
  const bareApp = express();
  bareApp.get('/bare', (_req, res) => {
    res.json({ code: '0000', msg: 'OK', data: null });
  });
  const bare = await serve(bareApp, { host: '127.0.0.1', port: 0, logger });
  const config = loadAdminConfig(
    { listen: '127.0.0.1:0', databaseUrl: pg.url, redisUrl: redis.url },
    {
      ...process.env,
      SECRET_KEY: 'keelson-benchmark-secret-key-0123456789',
      ADMIN_INITIAL_PASSWORD: benchPassword,
      LOGIN_RATE_LIMIT_PER_ADDRESS: '100000000',
      LOGIN_RATE_LIMIT_PER_USER: '100000000',
    },
  );
  const admin = await startAdmin(config, logger);
  const stop = async (): Promise<void> => {
    await admin.close().catch(() => undefined);
    await bare.close();
    await redis.stop();
    await pg.stop();
    process.exit(0);
  };
  process.once('SIGTERM', () => void stop());
  const loginAs = async (userName: string): Promise<string> =>
    (
      (await (
        await fetch(`${admin.server.url}/api/v1/auth/login`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ userName, password: benchPassword }),
        })
      ).json()) as { data: { token: string } }
    ).data.token;
  // A non-super user, so requests go through the full API permission check.
  const hash = await admin.services.passwords.hash(benchPassword);
  const { rows } = await admin.services.db.query<{ id: number }>(`INSERT INTO users (user_name, password) VALUES ('bench-admin', $1) RETURNING id`, [hash]);
  await admin.services.db.query(`INSERT INTO user_roles SELECT $1, id FROM roles WHERE role_code = 'R_ADMIN'`, [rows[0].id]);
  await admin.services.db.query(`INSERT INTO users (user_name, password) SELECT 'user' || g, 'x' FROM generate_series(1, 200) g`);
  // Autovacuum would analyze the new rows within a minute; measure the plans a running system has.
  await admin.services.db.query('ANALYZE');
  const postgresPid = Number(readFileSync(join(pg.dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
  const targets: Targets = {
    bare: bare.url,
    admin: admin.server.url,
    superToken: await loginAs('admin'),
    userToken: await loginAs('bench-admin'),
    pids: { admin: process.pid, postgres: postgresPid, redis: redis.process.pid ?? 0 },
  };
  process.stdout.write(`${JSON.stringify(targets)}\n`);
}

if (process.argv.includes('--serve')) await serveTargets();
