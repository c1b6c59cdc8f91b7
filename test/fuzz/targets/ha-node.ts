import { createHash } from 'node:crypto';
import { startCluster } from '../../sidecar/ha-node/harness.js';
import type { FuzzTarget } from '../campaign.js';
import type { RawAnswer } from '../raw-http.js';
import { pathOf, type FuzzProfile, type KnownCase } from '../requests.js';
import { basicAuth, forgedJwts } from './process.js';

/**
 * One `keelson ha-node` member (leader of its own cluster, with PostgreSQL) on the API server
 * stand-in. State is its dynamic configuration and the leader lock's holder; an accepted
 * configuration write is undone, so the campaign keeps a healthy leader.
 */
const apiUser = 'fuzz-api';
const apiPassword = 'fuzz-ha-api-pass-64';
const wrongPassword = 'fuzz-wrong-pass-39';

const healthPaths = [
  '/',
  '/primary',
  '/read-write',
  '/standby-leader',
  '/standby_leader',
  '/leader',
  '/replica',
  '/read-only',
  '/synchronous',
  '/sync',
  '/read-only-sync',
  '/quorum',
  '/read-only-quorum',
  '/asynchronous',
  '/async',
  '/health',
  '/liveness',
  '/readiness',
];
const refused4xx = (answer: RawAnswer): boolean => typeof answer.status === 'number' && answer.status >= 400 && answer.status < 500;

function knownCases(): KnownCase[] {
  const auth: Array<[string, string]> = [basicAuth(apiUser, apiPassword), ['Content-Type', 'application/json']];
  const expect400 = (answer: RawAnswer): string | undefined => (answer.status === 400 ? undefined : `expected 400, got ${answer.status}`);
  return [
    {
      name: 'config-prototype-key',
      build: (rng) => ({
        method: rng.pick(['PATCH', 'PUT']),
        target: '/config',
        headers: auth,
        body: Buffer.from(
          rng.pick(['{"__proto__":{"polluted":1}}', '{"postgresql":{"__proto__":{"polluted":1}}}', '{"constructor":{"prototype":{"polluted":1}}}']),
        ),
        authenticated: true,
      }),
      judge: expect400,
    },
    {
      name: 'config-ttl-out-of-range',
      build: (rng) => ({
        method: 'PATCH',
        target: '/config',
        headers: auth,
        body: Buffer.from(`{"ttl":${rng.pick(['9007199254740992', '1e309', '0', '-5', '4', '3601', '2147483648'])}}`),
        authenticated: true,
      }),
      judge: expect400,
    },
    {
      name: 'config-put-null-ttl',
      build: () => ({ method: 'PUT', target: '/config', headers: auth, body: Buffer.from('{"ttl":1e309}'), authenticated: true }),
      judge: expect400,
    },
    {
      name: 'failsafe-post-refused',
      build: (rng) => ({
        method: 'POST',
        target: '/failsafe',
        headers: rng.chance(0.5) ? [['Content-Type', 'application/json']] : auth,
        body: Buffer.from(rng.pick(['{"name":"x","api_url":"http://127.0.0.1:1/ha"}', 'null', `{"a":"${'x'.repeat(100_000)}"}`])),
        authenticated: false,
      }),
      // Refused: 401 without credentials, 400/413 for a bad body, and with credentials 502, Patroni's
      // answer while failsafe mode is off. Never 200: that would record a failsafe contact.
      judge: (answer) => (refused4xx(answer) || answer.status === 502 ? undefined : `failsafe mode is off: expected a refusal, got ${answer.status}`),
    },
    {
      name: 'reinitialize-wrong-types',
      build: (rng) => ({
        method: 'POST',
        target: '/reinitialize',
        headers: auth,
        body: Buffer.from(rng.pick(['{"force":1}', '"yes"', '{"from-leader":"x"}', '{"force":"true"}'])),
        authenticated: true,
      }),
      judge: expect400,
    },
    {
      name: 'config-deep-nesting',
      build: () => ({
        method: 'PATCH',
        target: '/config',
        headers: auth,
        body: Buffer.from(`{"postgresql":${'{"a":'.repeat(20_000)}1${'}'.repeat(20_000)}}`),
        authenticated: true,
      }),
      judge: (answer) => (refused4xx(answer) ? undefined : `expected 400 or 413, got ${answer.status}`),
    },
  ];
}

export async function startHaNodeTarget(): Promise<FuzzTarget> {
  const previousLevel = process.env.HA_TEST_LOG_LEVEL;
  process.env.HA_TEST_LOG_LEVEL = 'debug';
  const cluster = await startCluster({ members: 1, scope: 'fuzz', env: { KEELSON_API_USERNAME: apiUser, KEELSON_API_PASSWORD: apiPassword } });
  if (previousLevel === undefined) delete process.env.HA_TEST_LOG_LEVEL;
  else process.env.HA_TEST_LOG_LEVEL = previousLevel;
  const member = cluster.members[0];
  try {
    await cluster.waitFor('the member to lead', async () => (await member.status('/primary')) === 200);
    const original = (await member.get('/config')).body;
    const auth = basicAuth(apiUser, apiPassword);
    const profile: FuzzProfile = {
      paths: [
        ...healthPaths,
        '/ha',
        '/metrics',
        '/cluster',
        '/history',
        '/config',
        '/switchover',
        '/failover',
        '/restart',
        '/reload',
        '/reinitialize',
        '/failsafe',
        '/patroni',
      ],
      queryKeys: ['lag', 'replication_state', 'tag_nofailover', 'tag_clonefrom', 'mode'],
      bodies: [
        {
          ttl: 8,
          loop_wait: 1,
          retry_timeout: 3,
          maximum_lag_on_failover: 1048576,
          postgresql: { parameters: { max_connections: 40 } },
          failsafe_mode: false,
          synchronous_mode: false,
        },
        { leader: member.name, candidate: 'fuzz-9', scheduled_at: '2030-01-01T00:00:00+00:00' },
        { candidate: member.name },
        { restart_pending: true, role: 'replica', db_version: '99.0', timeout: 5, schedule: '2030-01-01T00:00:00+00:00' },
        { force: false, 'from-leader': false },
        { name: 'fuzz-9', api_url: 'http://127.0.0.1:1/ha', conn_url: 'postgres://127.0.0.1:1/postgres', slots: {} },
      ],
      contentTypes: ['application/json'],
      validAuth: () => [auth],
      badAuth: [
        basicAuth(apiUser, wrongPassword),
        basicAuth('', ''),
        ['Authorization', 'Basic !!'],
        ['Authorization', `Bearer ${forgedJwts[0]}`],
        ['Authorization', `Basic ${'QUFB'.repeat(5000)}`],
      ],
      knownCases: knownCases(),
      // An accepted restart (e.g. `{}`) would restart PostgreSQL: keep only ones scheduled far away.
      avoid: (request) => request.authenticated && request.method === 'POST' && pathOf(request.target) === '/restart' && !request.body.includes('2030'),
    };
    const state = async (): Promise<string> => {
      const config = (await member.get('/config')).body;
      return `${await cluster.leaderName()} ${createHash('sha256').update(config).digest('hex')}`;
    };
    const baseline = await state();
    return {
      name: 'ha-node',
      host: member.ip,
      port: member.apiPort,
      pid: member.process?.pid ?? 0,
      exited: () => {
        const child = member.process;
        return child && (child.exitCode !== null || child.signalCode !== null)
          ? `exit code ${child.exitCode}, signal ${child.signalCode}; last log: ${member.log().slice(-600)}`
          : undefined;
      },
      logs: () => member.log(),
      secrets: [
        { label: 'API password', value: apiPassword },
        { label: 'wrong password sent', value: wrongPassword },
        { label: 'superuser password', value: 'super-secret-test' },
        { label: 'replication password', value: 'repl-secret-test' },
      ],
      profile,
      allows5xx: (request, status) => {
        // Express routes without strict routing: one trailing slash reaches the same route. Letter
        // case counts, as in Patroni.
        const path = pathOf(request.target).replace(/(.)\/$/, '$1');
        if (status === 503 && healthPaths.includes(path)) return true;
        // As Patroni: a GET no route serves is the generic health check, 503 with the status body;
        // OPTIONS (load balancers' checks) and HEAD answer the same code.
        if (status === 503 && ['GET', 'HEAD', 'OPTIONS'].includes(request.method)) return true;
        if (status === 503 && request.method === 'POST' && (path === '/switchover' || path === '/failover' || path === '/reinitialize')) return true;
        // As Patroni: a method no route serves answers 501 "Unsupported method".
        if (status === 501) return true;
        // POST /failsafe answers 502 while failsafe mode is off (Patroni), GET /failsafe likewise.
        return status === 502 && path === '/failsafe';
      },
      refused: (_request, answer) => typeof answer.status !== 'number' || answer.status >= 400,
      state,
      async afterAccepted(request) {
        if (pathOf(request.target) === '/config')
          await fetch(`${member.apiUrl}/config`, { method: 'PUT', headers: { authorization: auth[1], 'content-type': 'application/json' }, body: original });
        if (request.method === 'POST' && pathOf(request.target) === '/restart')
          await fetch(`${member.apiUrl}/restart`, { method: 'DELETE', headers: { authorization: auth[1] } });
        if (request.method === 'POST' && pathOf(request.target) === '/switchover')
          await fetch(`${member.apiUrl}/switchover`, { method: 'DELETE', headers: { authorization: auth[1] } });
      },
      async finalChecks() {
        const problems: string[] = [];
        await new Promise((r) => setTimeout(r, 3000));
        if ((await state()) !== baseline) problems.push('the leader or the configuration changed over the campaign');
        if ((await member.status('/primary')) !== 200) problems.push('the member no longer answers /primary with 200 (leadership lost)');
        return problems;
      },
      stop: () => cluster.stop(),
    };
  } catch (error) {
    await cluster.stop();
    throw error;
  }
}
