import { readFileSync } from 'node:fs';
import pg from 'pg';
import { parse } from 'yaml';
import { kubeRequest, startTestApiServer } from '../../support/kube.js';
import { freePort } from '../../support/ports.js';
import { startPostgres } from '../../support/postgres.js';
import { startRedis } from '../../support/redis.js';
import type { FuzzTarget } from '../campaign.js';
import type { RawAnswer } from '../raw-http.js';
import type { FuzzProfile, KnownCase } from '../requests.js';
import { forgedJwts, repoRoot, spawnKeelson, waitForHttp } from './process.js';

/**
 * The admin backend as a `keelson admin` process with its own PostgreSQL and Redis and an API
 * server stand-in for the DatabaseCluster module. Paths come from its own apis table; state is a
 * digest of every table an API request can write.
 */
const adminPassword = 'fuzz-admin-pass-71';
const secretKey = 'keelson-fuzz-secret-key-0123456789abcdef';
const wrongPassword = 'fuzz-wrong-pass-39';

const stateTables = ['users', 'roles', 'menus', 'buttons', 'apis', 'user_roles', 'role_menus', 'role_buttons', 'role_apis', 'dictionaries'];
const stateSql = `SELECT md5(string_agg(row, '|' ORDER BY row)) AS digest FROM (${stateTables.map((t) => `SELECT '${t}' || t::text AS row FROM ${t} t`).join(' UNION ALL ')}) rows`;

function envelopeCode(answer: RawAnswer): string | undefined {
  try {
    const parsed = JSON.parse(answer.body) as { code?: unknown };
    return typeof parsed.code === 'string' ? parsed.code : undefined;
  } catch {
    return undefined;
  }
}

const json: Array<[string, string]> = [['Content-Type', 'application/json']];

function knownCases(token: () => string): KnownCase[] {
  const auth = (): Array<[string, string]> => [['Authorization', `Bearer ${token()}`], ...json];
  const validation = (answer: RawAnswer): string | undefined =>
    envelopeCode(answer) === '1200' ? undefined : `expected code 1200, got ${envelopeCode(answer) ?? answer.status}`;
  return [
    {
      name: 'nul-in-filter',
      build: () => ({
        method: 'POST',
        target: '/api/v1/system-manage/users/search',
        headers: auth(),
        body: Buffer.from('{"userName":"\\u0000"}'),
        authenticated: true,
      }),
      judge: validation,
    },
    {
      name: 'nul-in-login',
      build: () => ({
        method: 'POST',
        target: '/api/v1/auth/login',
        headers: json,
        body: Buffer.from('{"userName":"admin\\u0000","password":"x"}'),
        authenticated: false,
      }),
      judge: validation,
    },
    {
      name: 'forged-token',
      build: (rng) => ({
        method: 'GET',
        target: '/api/v1/auth/user-info',
        headers: [['Authorization', `Bearer ${rng.pick(forgedJwts)}`]],
        body: Buffer.alloc(0),
        authenticated: false,
      }),
      judge: (answer) => (envelopeCode(answer) === '2100' ? undefined : `expected code 2100, got ${envelopeCode(answer) ?? answer.status}`),
    },
  ];
}

export async function startAdminTarget(): Promise<FuzzTarget> {
  const postgres = await startPostgres();
  const redis = await startRedis();
  // One connection for the state reads: a fresh one per read would cost more than the request.
  const db = new pg.Client({ connectionString: postgres.url });
  await db.connect();
  const kube = await startTestApiServer();
  const crd = parse(readFileSync(`${repoRoot}crds/keelson.io_databaseclusters.yaml`, 'utf8')) as unknown;
  await kubeRequest(kube, 'POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', { body: crd });
  const port = await freePort();
  const server = spawnKeelson(['admin', '--listen', `127.0.0.1:${port}`, '--database-url', postgres.url, '--redis-url', redis.url], {
    LOG_LEVEL: 'debug',
    ARGON2_MEMORY_KIB: '1024',
    ARGON2_TIME_COST: '1',
    ADMIN_INITIAL_PASSWORD: adminPassword,
    SECRET_KEY: secretKey,
    LOGIN_RATE_LIMIT_PER_ADDRESS: '100000000',
    LOGIN_RATE_LIMIT_PER_USER: '100000000',
    KUBECONFIG: kube.kubeconfigPath,
  });
  const stopAll = async (): Promise<void> => {
    await server.stop();
    await kube.close();
    await redis.stop();
    await db.end().catch(() => undefined);
    await postgres.stop();
  };
  try {
    const base = `http://127.0.0.1:${port}`;
    await waitForHttp(`${base}/healthz`, server);
    // The seeded administrator must change its password before changing anything (2108); the
    // fuzzer exercises the API behind that step, as an administrator who has done it.
    await db.query('UPDATE users SET must_change_password = false WHERE user_name = $1', ['admin']);
    const login = async (): Promise<{ token: string; refreshToken: string }> => {
      const reply = (await (
        await fetch(`${base}/api/v1/auth/login`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ userName: 'admin', password: adminPassword }),
        })
      ).json()) as { data: { token: string; refreshToken: string } };
      return reply.data;
    };
    let tokens = await login();
    const { rows } = await db.query<{ api_path: string }>('SELECT DISTINCT api_path FROM apis ORDER BY api_path');
    const paths = rows.map((r) => r.api_path.replace(/\{[^}]+\}/g, 'YaD2RMJ5'));
    const issued = new Set<string>([tokens.token, tokens.refreshToken]);
    let digest = '';
    let digestAt = '';
    const profile: FuzzProfile = {
      paths: [...paths, '/healthz', '/metrics', '/api/v1/route/exists', '/'],
      queryKeys: ['name', 'current', 'size'],
      bodies: [
        { userName: 'admin', password: wrongPassword },
        {
          userName: 'fuzz-user',
          password: 'fuzz-pass-1',
          nickName: 'n',
          userEmail: 'a@b.c',
          userPhone: '123',
          byUserRoleCodeList: ['R_USER'],
          statusType: '1',
        },
        { current: 1, size: 10, orderBy: ['-id'], userName: 'a', statusType: '1' },
        { roleName: 'r', roleCode: 'R_FUZZ', roleDesc: 'd', byRoleHomeId: 'YaD2RMJ5' },
        {
          menuName: 'm',
          routeName: 'fuzz',
          routePath: '/fuzz',
          menuType: '2',
          routeParam: [{ key: 'k', value: 'v' }],
          byMenuButtons: [{ buttonCode: 'B_X', buttonDesc: 'x' }],
        },
        { ids: ['YaD2RMJ5'] },
        { refreshToken: 'not-a-token' },
        { phone: '13800000000', code: '000000' },
        { namespace: 'default', name: 'fuzz', spec: { instances: 1, postgresVersion: 15, storage: { size: '1Gi' } } },
        { instances: 3 },
      ],
      contentTypes: ['application/json', 'application/json; charset=utf-8'],
      validAuth: () => [['Authorization', `Bearer ${tokens.token}`]],
      badAuth: [
        ['Authorization', 'Bearer '],
        ['Authorization', 'Bearer x.y.z'],
        ['Authorization', `Bearer ${forgedJwts[0]}`],
        ['Authorization', `Bearer ${forgedJwts[1]}`],
        ['Authorization', `Basic ${Buffer.from(`admin:${wrongPassword}`).toString('base64')}`],
        ['Authorization', `Bearer ${'a'.repeat(10_000)}`],
      ],
      knownCases: knownCases(() => tokens.token),
    };
    return {
      name: 'admin',
      host: '127.0.0.1',
      port,
      pid: server.pid,
      exited: server.exited,
      logs: server.logs,
      get secrets() {
        return [
          { label: 'admin password', value: adminPassword },
          { label: 'wrong password sent in logins', value: wrongPassword },
          { label: 'SECRET_KEY', value: secretKey },
          { label: 'PostgreSQL password', value: postgres.password },
          ...[...issued].map((value, i) => ({ label: `issued token ${i}`, value })),
        ];
      },
      profile,
      allows5xx: () => false,
      refused: (_request, answer) => answer.status !== 200 || envelopeCode(answer) !== '0000',
      judge: (_request, answer) => (envelopeCode(answer) === '1000' ? 'internal-error envelope (1000)' : undefined),
      async state() {
        // Every write takes a transaction id: while the next one is unchanged, so are the tables.
        const next = (await db.query<{ xmax: string }>('SELECT pg_snapshot_xmax(pg_current_snapshot())::text AS xmax')).rows[0].xmax;
        if (next !== digestAt) {
          digest = (await db.query<{ digest: string }>(stateSql)).rows[0].digest;
          digestAt = next;
        }
        return digest;
      },
      async afterAccepted() {
        // An accepted write may have logged the admin out (password change, session invalidation).
        const check = await fetch(`http://127.0.0.1:${port}/api/v1/auth/user-info`, { headers: { authorization: `Bearer ${tokens.token}` } });
        if (((await check.json()) as { code: string }).code !== '0000') {
          tokens = await login();
          issued.add(tokens.token);
          issued.add(tokens.refreshToken);
        }
      },
      stop: stopAll,
    };
  } catch (error) {
    await stopAll();
    throw error;
  }
}
