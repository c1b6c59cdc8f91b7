import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { PassThrough } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import pg from 'pg';
import { checkSecret, DEVELOPMENT_SECRET_KEY, loadAdminConfig } from '../../admin/config.js';
import { createPasswordHasher } from '../../admin/auth/passwords.js';
import type { MountedRoute } from '../../admin/http/router.js';
import { migrate, MIGRATIONS_TABLE, type Migration } from '../../admin/db/migrate.js';
import { adminMigrations } from '../../admin/db/migrations/index.js';
import { reconcileApis } from '../../admin/db/reconcile.js';
import { seedIfEmpty } from '../../admin/db/seed.js';
import { startAdmin } from '../../admin/server.js';
import { createLogger } from '../../lib/log.js';
import { freePort } from '../support/ports.js';
import { startPostgres, type TestPostgres } from '../support/postgres.js';
import { startRedis } from '../support/redis.js';

const run = promisify(execFile);

function captureLogger() {
  const lines: Record<string, unknown>[] = [];
  const stream = new PassThrough();
  stream.on('data', (chunk: Buffer) => {
    for (const line of chunk.toString().split('\n')) if (line.trim()) lines.push(JSON.parse(line) as Record<string, unknown>);
  });
  return { logger: createLogger({ name: 'admin', level: 'debug', destination: stream }), lines };
}

const route = (method: MountedRoute['method'], template: string, summary: string, tags: string[]): MountedRoute => ({
  method,
  template,
  path: template,
  summary,
  tags,
  guard: 'permission',
  handler: async () => undefined,
});

describe('admin start-up: migrations, API reconciliation, seed, secret checks, CLI', () => {
  let server: TestPostgres;
  const databases: string[] = [];
  const pools: pg.Pool[] = [];

  const freshDb = async (name: string): Promise<pg.Pool> => {
    await server.query(`CREATE DATABASE ${name}`);
    databases.push(name);
    const pool = new pg.Pool({ connectionString: server.urlFor(name), max: 3 });
    // Idle clients see the server's shutdown at the end; that must not become an uncaught error.
    pool.on('error', () => undefined);
    pools.push(pool);
    return pool;
  };

  before(async () => {
    server = await startPostgres();
  });
  after(async () => {
    for (const pool of pools) await pool.end();
    await server?.stop();
  });

  describe('migration runner', () => {
    it('applies every migration once, in order, and records it', async () => {
      const db = await freshDb('mig1');
      const first = await migrate(db, adminMigrations);
      assert.deepEqual(
        first.applied,
        adminMigrations.map((m) => m.version),
      );
      const second = await migrate(db, adminMigrations);
      assert.deepEqual(second.applied, [], 'nothing to do the second time');
      const { rows } = await db.query(`SELECT version, name FROM ${MIGRATIONS_TABLE} ORDER BY version`);
      assert.deepEqual(
        rows.map((r) => r.name),
        adminMigrations.map((m) => m.name),
      );
      const tables = await db.query(`SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY table_name`);
      for (const t of ['users', 'roles', 'menus', 'buttons', 'apis', 'dictionaries', 'user_roles', 'role_menus', 'role_buttons', 'role_apis']) {
        assert.ok(
          tables.rows.some((r) => r.table_name === t),
          `table ${t}`,
        );
      }
    });

    it('runs concurrent starts safely (advisory lock)', async () => {
      const db = await freshDb('mig2');
      const results = await Promise.all([migrate(db, adminMigrations), migrate(db, adminMigrations), migrate(db, adminMigrations)]);
      assert.equal(
        results.reduce((n, r) => n + r.applied.length, 0),
        adminMigrations.length,
      );
    });

    it('refuses a changed migration, an unknown newer one and a bad list; a failing migration rolls back', async () => {
      const db = await freshDb('mig3');
      const one: Migration[] = [{ version: 1, name: 'one', sql: 'CREATE TABLE one (id int)' }];
      await migrate(db, one);
      await assert.rejects(migrate(db, [{ ...one[0], sql: 'CREATE TABLE one (id bigint)' }]), /changed after it was applied/);
      await assert.rejects(migrate(db, []), /does not know/);
      await assert.rejects(migrate(db, [{ version: 2, name: 'gap', sql: 'SELECT 1' }]), /out of order/);
      const broken: Migration[] = [...one, { version: 2, name: 'broken', sql: 'CREATE TABLE two (id int); SELECT * FROM missing_table' }];
      await assert.rejects(migrate(db, broken), /migration 2 \(broken\) failed/);
      const two = await db.query(`SELECT to_regclass('two') AS t`);
      assert.equal(two.rows[0].t, null, 'the partial migration was rolled back');
    });
  });

  describe('API reconciliation', () => {
    it('inserts new routes, deletes vanished ones with their grants, refreshes summaries and tags, keeps status', async () => {
      const db = await freshDb('rec1');
      await migrate(db, adminMigrations);
      await reconcileApis(db, [route('get', '/a', 'A', ['x']), route('post', '/b', 'B', ['x']), route('get', '/a/{id}', 'A one', ['x'])]);
      await db.query(`UPDATE apis SET status_type = '2' WHERE api_path = '/a'`);
      await db.query(`INSERT INTO roles (role_name, role_code) VALUES ('r', 'R_R')`);
      await db.query(`INSERT INTO role_apis SELECT r.id, a.id FROM roles r, apis a WHERE a.api_path = '/b'`);
      const result = await reconcileApis(db, [
        route('get', '/a', 'A renamed', ['y']),
        route('get', '/a/{id}', 'A one', ['x']),
        route('delete', '/c', 'C', ['z']),
      ]);
      assert.deepEqual(result, { inserted: 1, updated: 1, deleted: 1 });
      const { rows } = await db.query(`SELECT api_method, api_path, summary, tags, status_type FROM apis ORDER BY api_path, api_method`);
      assert.deepEqual(rows, [
        { api_method: 'get', api_path: '/a', summary: 'A renamed', tags: ['y'], status_type: '2' },
        { api_method: 'get', api_path: '/a/{id}', summary: 'A one', tags: ['x'], status_type: '1' },
        { api_method: 'delete', api_path: '/c', summary: 'C', tags: ['z'], status_type: '1' },
      ]);
      assert.equal((await db.query('SELECT count(*)::int AS n FROM role_apis')).rows[0].n, 0, 'grants of the vanished API went with it');
    });
  });

  describe('seed', () => {
    it('fills an empty database once with a generated password printed once', async () => {
      const db = await freshDb('seed1');
      await migrate(db, adminMigrations);
      const { logger, lines } = captureLogger();
      const hasher = createPasswordHasher({ memoryCost: 1024, timeCost: 1, parallelism: 1 });
      const result = await seedIfEmpty(db, hasher, { initialUsername: 'root' }, logger);
      assert.equal(result.seeded, true);
      const password = result.generatedPassword as string;
      assert.match(password, /^[A-Za-z0-9]{18}$/, 'letters and digits, the most any stock login form allows');
      const [user] = (await db.query(`SELECT user_name, password, must_change_password FROM users`)).rows;
      assert.equal(user.user_name, 'root');
      assert.equal(user.must_change_password, true);
      assert.ok(await hasher.verify(user.password, password), 'the printed password is the stored one');
      await new Promise((r) => setImmediate(r));
      assert.equal(lines.filter((l) => String(l.msg).includes(password)).length, 1, 'printed exactly once');
      const roles = (await db.query(`SELECT role_code FROM roles ORDER BY id`)).rows.map((r) => r.role_code);
      assert.deepEqual(roles, ['R_SUPER', 'R_ADMIN', 'R_USER']);
      assert.ok(Number((await db.query(`SELECT count(*) AS n FROM buttons WHERE button_code LIKE 'B_SYSTEM_%'`)).rows[0].n) >= 16);
      const again = await seedIfEmpty(db, hasher, { initialUsername: 'root' }, logger);
      assert.equal(again.seeded, false);
      assert.equal((await db.query('SELECT count(*)::int AS n FROM users')).rows[0].n, 1);
    });
  });

  describe('configuration and secret key', () => {
    it('defaults: listen :8080, HS256, 12 h and 7 d, development key with a warning', () => {
      const config = loadAdminConfig({}, { DATABASE_URL: 'postgres://x@localhost/db' });
      assert.equal(config.listen, ':8080');
      assert.equal(config.jwtAlgorithm, 'HS256');
      assert.equal(config.accessTokenMinutes, 720);
      assert.equal(config.refreshTokenMinutes, 10080);
      assert.equal(config.secretKey, DEVELOPMENT_SECRET_KEY);
      assert.equal(checkSecret(config, {})?.level, 'warn');
      assert.equal(checkSecret(config, { NODE_ENV: 'production' })?.level, 'fatal');
      assert.equal(
        checkSecret(loadAdminConfig({}, { DATABASE_URL: 'postgres://x@h/d', SECRET_KEY: 'a-real-secret-key-of-length' }), { NODE_ENV: 'production' }),
        undefined,
      );
      assert.equal(
        loadAdminConfig({ listen: '127.0.0.1:9000' }, { DATABASE_URL: 'postgres://x@h/d', LISTEN_ADDRESS: ':7000' }).listen,
        '127.0.0.1:9000',
        'flag beats env',
      );
      assert.throws(() => loadAdminConfig({}, { DATABASE_URL: 'postgres://x@h/d', JWT_ALGORITHM: 'none' }), /jwtAlgorithm/);
      assert.throws(() => loadAdminConfig({}, {}), /databaseUrl/);
    });

    it('refuses to start with the development key when NODE_ENV=production', async () => {
      const previous = process.env.NODE_ENV;
      process.env.NODE_ENV = 'production';
      try {
        const { logger } = captureLogger();
        const config = loadAdminConfig({ listen: '127.0.0.1:0' }, { DATABASE_URL: server.urlFor('postgres') });
        await assert.rejects(startAdmin(config, logger), /SECRET_KEY/);
      } finally {
        if (previous === undefined) delete process.env.NODE_ENV;
        else process.env.NODE_ENV = previous;
      }
    });

    it('`keelson admin` serves with flags and env, prints the generated password once and stops on SIGTERM', async () => {
      await server.query('CREATE DATABASE cli1');
      const redis = await startRedis();
      const port = await freePort();
      const child = spawn(
        process.execPath,
        ['--import', 'tsx', 'bin/keelson.ts', 'admin', '--listen', `127.0.0.1:${port}`, '--database-url', server.urlFor('cli1'), '--redis-url', redis.url],
        {
          env: {
            ...process.env,
            ARGON2_MEMORY_KIB: '1024',
            ARGON2_TIME_COST: '1',
            SECRET_KEY: 'cli-test-secret-key-0123456789',
            LOG_LEVEL: 'info',
            NODE_ENV: 'test',
          },
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
      let output = '';
      child.stdout?.on('data', (d: Buffer) => (output += d.toString()));
      child.stderr?.on('data', (d: Buffer) => (output += d.toString()));
      const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
      try {
        // Wait for the listening line (tsx compiles the CLI first: slow on a loaded machine); a SIGTERM
        // before the handlers are installed would end it with the signal instead of exit code 0.
        for (let i = 0; i < 1200 && !output.includes('"listening"'); i++) await new Promise((r) => setTimeout(r, 50));
        assert.match(output, /"listening"/, 'the admin process came up');
        const reply = (await (await fetch(`http://127.0.0.1:${port}/api/v1/route/constant-routes`)).json()) as { code: string };
        assert.equal(reply.code, '0000');
        const generated = /generated password (\S+)/.exec(output)?.[1];
        assert.ok(generated, 'the generated password is in the log');
        const login = (await (
          await fetch(`http://127.0.0.1:${port}/api/v1/auth/login`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ userName: 'admin', password: generated }),
          })
        ).json()) as { code: string; data: { mustChangePassword: boolean } };
        assert.equal(login.code, '0000');
        assert.equal(login.data.mustChangePassword, true);
        assert.equal(output.split(generated).length - 1, 1, 'printed exactly once');
        assert.doesNotMatch(output, /development value/, 'no warning with a real SECRET_KEY');
      } finally {
        child.kill('SIGTERM');
        assert.equal(await exited, 0, 'graceful stop');
        await redis.stop();
      }
    });

    it('the CLI exits 1 with a one-line message in that case', async () => {
      const failed = await run(
        process.execPath,
        ['--import', 'tsx', 'bin/keelson.ts', 'admin', '--listen', '127.0.0.1:0', '--database-url', server.urlFor('postgres')],
        {
          env: { ...process.env, NODE_ENV: 'production', SECRET_KEY: '' },
        },
      ).then(
        () => undefined,
        (e: { code: number; stderr: string }) => e,
      );
      assert.ok(failed, 'the command must fail');
      assert.equal(failed.code, 1);
      assert.match(failed.stderr, /^keelson: SECRET_KEY is the built-in development value/);
    });
  });
});
