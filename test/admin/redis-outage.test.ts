import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { loadAdminConfig } from '../../admin/config.js';
import { startAdmin } from '../../admin/server.js';
import { createLogger } from '../../lib/log.js';
import { ADMIN_PASSWORD, TEST_SECRET, startHarness, until, type Harness } from './support.js';

describe('admin with Redis stopped mid-run and restarted', () => {
  let h: Harness;
  let adminToken: string;
  let userToken: string;
  let userId: number;

  before(async () => {
    h = await startHarness({ LOGIN_RATE_LIMIT_PER_ADDRESS: '40' });
    adminToken = (await h.login('admin', ADMIN_PASSWORD)).token;
    userId = await h.createUser('outage1', 'pass-123', ['R_ADMIN']);
    userToken = (await h.login('outage1', 'pass-123')).token;
  });
  after(async () => h?.stop());

  const userInfo = (token: string) => h.call<Record<string, unknown>>('GET', '/api/v1/auth/user-info', { token });

  it('keeps serving while Redis is down: version check skipped with a warning, roles from the database', async () => {
    assert.equal((await userInfo(userToken)).code, '0000');
    await h.redis.stopServer();
    await until('the client to notice', () => !h.admin.services.kv.isReady());
    const started = Date.now();
    const info = await userInfo(userToken);
    assert.equal(info.code, '0000');
    assert.deepEqual(info.data.roles, ['R_ADMIN'], 'roles loaded from the database');
    assert.ok(Date.now() - started < 2000, 'no hang waiting for Redis');
    assert.ok(
      h.logs.some((l) => l.level === 'warn' && String(l.msg).includes('session version check skipped')),
      'a warning is logged',
    );
    assert.equal(
      (await h.call('POST', '/api/v1/system-manage/users/search', { token: userToken, body: {} })).code,
      '0000',
      'API permission still checked and granted',
    );
    assert.equal(
      (await h.call('POST', '/api/v1/system-manage/roles/search', { token: (await h.login('admin', ADMIN_PASSWORD)).token, body: {} })).code,
      '0000',
      'login works without Redis',
    );
    assert.equal((await h.call('GET', '/api/v1/route/constant-routes')).code, '0000', 'constant routes fall back to the database');
    assert.equal((await h.call('GET', '/api/v1/system-manage/dictionaries/user_gender/options', { token: adminToken })).data instanceof Array, true);
    assert.equal((await h.call('POST', '/api/v1/auth/captcha', { body: { phone: '13700000000' } })).code, '2403', 'captcha cannot be stored');
  });

  it('a forced logout during the outage is kept in the database; old tokens still pass while checks are skipped', async () => {
    assert.equal((await h.call('POST', `/api/v1/system-manage/users/${h.admin.services.ids.encode(userId)}/offline`, { token: adminToken })).code, '0000');
    const [row] = await h.sql<{ token_version: number }>('SELECT token_version FROM users WHERE id = $1', [userId]);
    assert.equal(row.token_version, 1);
    assert.equal((await userInfo(userToken)).code, '0000', 'the spec allows requests while the version check is skipped');
  });

  it('resumes version checks when Redis returns (versions re-synced from the database)', async () => {
    await h.redis.restart();
    await until(
      'the client to reconnect and sync',
      async () => h.admin.services.kv.isReady() && (await h.admin.services.kv.redis.get(`token_version:${userId}`)) === '1',
    );
    assert.equal((await userInfo(userToken)).code, '2106', 'the old token is now rejected');
    const fresh = (await h.login('outage1', 'pass-123')).token;
    assert.equal((await userInfo(fresh)).code, '0000');
    assert.equal((await h.call('POST', '/api/v1/auth/captcha', { body: { phone: '13700000000' } })).code, '0000');
  });

  it('limits logins and captcha requests per client address (2500)', async () => {
    let code = '0000';
    for (let i = 0; i < 45 && code !== '2500'; i++)
      code = (await h.call('POST', '/api/v1/auth/login', { body: { userName: `nobody${i}`, password: 'x' } })).code;
    assert.equal(code, '2500');
    assert.equal(
      (await h.call('POST', '/api/v1/auth/login', { body: { userName: 'admin', password: ADMIN_PASSWORD } })).code,
      '2500',
      'the address is blocked for every name',
    );
    assert.ok(
      h.logs.some((l) => l.action === 'login.rate_limited'),
      'audited',
    );
    let captcha = '0000';
    for (let i = 0; i < 45 && captcha === '0000'; i++)
      captcha = (await h.call('POST', '/api/v1/auth/captcha', { body: { phone: `1360000${String(i).padStart(4, '0')}` } })).code;
    assert.equal(captcha, '2500', 'captcha requests share the per-address budget');
  });

  it('a restarted admin keeps its data, does not seed again and accepts existing tokens', async () => {
    // This address is rate limited by now, so the token is issued directly with the current version.
    const version = await h.admin.services.sessions.currentVersion(userId, 0);
    const token = await h.admin.services.tokens.sign({ userId, userName: 'outage1', tokenType: 'accessToken', tokenVersion: version, impersonatorId: 0 });
    await h.admin.close();
    const config = loadAdminConfig(
      { listen: '127.0.0.1:0', databaseUrl: h.pg.url, redisUrl: h.redis.url },
      { ARGON2_MEMORY_KIB: '1024', ARGON2_TIME_COST: '1', SECRET_KEY: TEST_SECRET },
    );
    const second = await startAdmin(config, createLogger({ name: 'admin', level: 'silent' }));
    try {
      assert.equal(second.seed.seeded, false);
      const reply = await fetch(`${second.server.url}/api/v1/auth/user-info`, { headers: { authorization: `Bearer ${token}` } });
      const body = (await reply.json()) as { code: string; data: { userName: string } };
      assert.equal(body.code, '0000');
      assert.equal(body.data.userName, 'outage1');
      const apis = await second.services.db.query(`SELECT count(*)::int AS n FROM apis`);
      assert.equal(apis.rows[0].n, second.routes.length, 'one API row per route after reconciliation');
    } finally {
      await second.close();
    }
  });
});
