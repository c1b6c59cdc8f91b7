import { PassThrough } from 'node:stream';
import { loadAdminConfig } from '../../admin/config.js';
import { startAdmin, type AdminInstance } from '../../admin/server.js';
import { createLogger } from '../../lib/log.js';
import { startPostgres, type TestPostgres } from '../support/postgres.js';
import { startRedis, type TestRedis } from '../support/redis.js';

export const ADMIN_PASSWORD = 'admin-pass-1';

/** Polls until check() holds; fails naming what it waited for. */
export async function until(what: string, check: () => Promise<boolean> | boolean, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}
export const TEST_SECRET = 'keelson-admin-test-secret-0123456789';

export interface Reply<T = unknown> {
  status: number;
  code: string;
  msg: string;
  data: T;
  headers: Headers;
}

export interface Harness {
  pg: TestPostgres;
  redis: TestRedis;
  admin: AdminInstance;
  url: string;
  /** Every JSON log line the admin wrote. */
  logs: Record<string, unknown>[];
  call<T = unknown>(
    method: string,
    path: string,
    options?: { token?: string; body?: unknown; raw?: string; headers?: Record<string, string> },
  ): Promise<Reply<T>>;
  login(userName: string, password: string): Promise<{ token: string; refreshToken: string }>;
  /** Runs SQL directly and drops cached permissions, as an admin write through the API would. */
  sql<T extends Record<string, unknown> = Record<string, unknown>>(text: string, params?: unknown[]): Promise<T[]>;
  /** Creates a user (cheap test hash) with the given role codes; returns its id. */
  createUser(userName: string, password: string, roleCodes: string[]): Promise<number>;
  stop(): Promise<void>;
}

export interface HarnessOptions {
  /**
   * Keep the seeded administrator's pending password change (mustChangePassword). Off by default:
   * tests of everything else act as an administrator who has already changed it.
   */
  keepSeededPasswordChange?: boolean;
}

/** Starts PostgreSQL, Redis and the admin (cheap argon2, high login limits unless overridden). */
export async function startHarness(env: Record<string, string> = {}, options: HarnessOptions = {}): Promise<Harness> {
  const pg = await startPostgres();
  const redis = await startRedis();
  const logs: Record<string, unknown>[] = [];
  const stream = new PassThrough();
  let pending = '';
  stream.on('data', (chunk: Buffer) => {
    pending += chunk.toString();
    let newline: number;
    while ((newline = pending.indexOf('\n')) >= 0) {
      const line = pending.slice(0, newline);
      pending = pending.slice(newline + 1);
      try {
        logs.push(JSON.parse(line) as Record<string, unknown>);
      } catch {
        logs.push({ raw: line });
      }
    }
  });
  let admin: AdminInstance;
  try {
    const config = loadAdminConfig(
      { listen: '127.0.0.1:0', databaseUrl: pg.url, redisUrl: redis.url },
      {
        ARGON2_MEMORY_KIB: '1024',
        ARGON2_TIME_COST: '1',
        ADMIN_INITIAL_PASSWORD: ADMIN_PASSWORD,
        SECRET_KEY: TEST_SECRET,
        LOGIN_RATE_LIMIT_PER_ADDRESS: '100000',
        REDIS_TIMEOUT_MS: '300',
        ...env,
      },
    );
    admin = await startAdmin(config, createLogger({ name: 'admin', level: 'debug', destination: stream }));
  } catch (error) {
    await redis.stop();
    await pg.stop();
    throw error;
  }
  const url = admin.server.url;
  const harness: Harness = {
    pg,
    redis,
    admin,
    url,
    logs,
    async call<T>(method: string, path: string, options: { token?: string; body?: unknown; raw?: string; headers?: Record<string, string> } = {}) {
      const headers: Record<string, string> = { ...(options.headers ?? {}) };
      if (options.token) headers.authorization = `Bearer ${options.token}`;
      let body: string | undefined;
      if (options.raw !== undefined) body = options.raw;
      else if (options.body !== undefined) body = JSON.stringify(options.body);
      if (body !== undefined) headers['content-type'] = 'application/json';
      const response = await fetch(url + path, { method, headers, body });
      const json = (await response.json()) as { code: string; msg: string; data: T };
      return { status: response.status, code: json.code, msg: json.msg, data: json.data, headers: response.headers };
    },
    async login(userName, password) {
      const reply = await harness.call<{ token: string; refreshToken: string }>('POST', '/api/v1/auth/login', { body: { userName, password } });
      if (reply.code !== '0000') throw new Error(`login ${userName} failed: ${reply.code} ${reply.msg}`);
      return reply.data;
    },
    async sql<T extends Record<string, unknown>>(text: string, params: unknown[] = []) {
      const { rows } = await admin.services.db.query<T>(text, params);
      await admin.services.principals.invalidateAll();
      return rows;
    },
    async createUser(userName, password, roleCodes) {
      const hash = await admin.services.passwords.hash(password);
      const [row] = await harness.sql<{ id: number }>('INSERT INTO users (user_name, password, nick_name) VALUES ($1, $2, $1) RETURNING id', [userName, hash]);
      if (roleCodes.length)
        await harness.sql('INSERT INTO user_roles (user_id, role_id) SELECT $1, id FROM roles WHERE role_code = ANY($2)', [row.id, roleCodes]);
      return row.id;
    },
    async stop() {
      await admin.close().catch(() => undefined);
      await redis.stop();
      await pg.stop();
    },
  };
  if (!options.keepSeededPasswordChange)
    await harness.sql('UPDATE users SET must_change_password = false WHERE user_name = $1', [env.ADMIN_INITIAL_USERNAME ?? 'admin']);
  return harness;
}
