import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import bcrypt from 'bcryptjs';
import { freePort } from '../../support/ports.js';
import { startPostgres } from '../../support/postgres.js';
import type { FuzzTarget } from '../campaign.js';
import type { RawAnswer } from '../raw-http.js';
import { pathOf, type FuzzProfile } from '../requests.js';
import { basicAuth, forgedJwts, spawnKeelson, waitForHttp } from './process.js';

/**
 * The exporter as a `keelson exporter` process scraping its own PostgreSQL, with basic auth on the
 * administrative endpoints (/reload, /explain, /stat). State is the collector plan (/explain).
 */
const user = 'prometheus';
const password = 'fuzz-exporter-pass-52';
const wrongPassword = 'fuzz-wrong-pass-39';

const healthPaths = ['/up', '/health', '/primary', '/leader', '/master', '/read-write', '/rw', '/replica', '/standby', '/read-only', '/ro', '/slave', '/read'];

export async function startExporterTarget(): Promise<FuzzTarget> {
  const pg = await startPostgres();
  const dir = mkdtempSync(join(tmpdir(), 'keelson-fuzz-exporter-'));
  writeFileSync(join(dir, 'web.yml'), `basic_auth_users:\n  ${user}: ${await bcrypt.hash(password, 4)}\n`);
  const port = await freePort();
  const server = spawnKeelson(
    [
      'exporter',
      '--url',
      pg.url,
      '--web.listen-address',
      `127.0.0.1:${port}`,
      '--web.config.file',
      join(dir, 'web.yml'),
      '--web.auth-scope',
      'admin',
      '--log.level',
      'debug',
      '--connect-timeout',
      '1000',
    ],
    {},
  );
  const stopAll = async (): Promise<void> => {
    await server.stop();
    await pg.stop();
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const base = `http://127.0.0.1:${port}`;
    await waitForHttp(`${base}/up`, server);
    // The collector plan is made on the first scrape: take it before the state baseline.
    await (await fetch(`${base}/metrics`)).text();
    const auth = basicAuth(user, password);
    const profile: FuzzProfile = {
      paths: [...healthPaths, '/metrics', '/liveness', '/readiness', '/reload', '/explain', '/stat', '/', '/favicon.ico'],
      queryKeys: ['collect[]', 'name', 'format', 'timeout'],
      bodies: [{ reload: true }, { collectors: ['pg_up'] }],
      contentTypes: ['application/json', 'text/plain'],
      validAuth: () => [auth],
      badAuth: [
        basicAuth(user, wrongPassword),
        basicAuth('', ''),
        ['Authorization', 'Basic !!!notbase64'],
        ['Authorization', `Basic ${Buffer.from(user).toString('base64')}`],
        ['Authorization', `Bearer ${forgedJwts[0]}`],
        ['Authorization', `Basic ${'QUFB'.repeat(5000)}`],
      ],
      knownCases: [
        {
          name: 'reload-unsupported-method',
          build: () => ({ method: 'PUT', target: '/reload', headers: [auth], body: Buffer.alloc(0), authenticated: true }),
          judge: (answer: RawAnswer) =>
            answer.status === 405 && /GET/.test(answer.headers.allow ?? '')
              ? undefined
              : `expected 405 with Allow, got ${answer.status} allow=${answer.headers.allow}`,
        },
        {
          name: 'reload-without-credentials',
          build: (rng) => ({
            method: 'POST',
            target: '/reload',
            headers: rng.chance(0.5) ? [basicAuth(user, wrongPassword)] : [],
            body: Buffer.alloc(0),
            authenticated: false,
          }),
          judge: (answer: RawAnswer) => (answer.status === 401 ? undefined : `expected 401, got ${answer.status}`),
        },
      ],
    };
    return {
      name: 'exporter',
      host: '127.0.0.1',
      port,
      pid: server.pid,
      exited: server.exited,
      logs: server.logs,
      secrets: [
        { label: 'basic auth password', value: password },
        { label: 'wrong password sent', value: wrongPassword },
        { label: 'PostgreSQL password', value: pg.password },
      ],
      profile,
      allows5xx: (request, status) =>
        (status === 503 && healthPaths.includes(pathOf(request.target))) || (status === 500 && pathOf(request.target) === '/reload'),
      // Only a reload re-reads the collector definitions; reading /explain costs more than a request.
      canChangeState: (request) => pathOf(request.target).startsWith('/reload'),
      refused: (_request, answer) => typeof answer.status !== 'number' || answer.status >= 400,
      async state() {
        const response = await fetch(`${base}/explain`, { headers: { authorization: auth[1] } });
        return `${response.status} ${createHash('sha256')
          .update(await response.text())
          .digest('hex')}`;
      },
      stop: stopAll,
    };
  } catch (error) {
    await stopAll();
    throw error;
  }
}
