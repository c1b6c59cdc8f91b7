import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ADMIN_PASSWORD, startHarness, type Harness } from './support.js';

type Tokens = { token: string; refreshToken: string; mustChangePassword?: boolean };

const payloadOf = (token: string): { iat: number; exp: number; data: Record<string, unknown> } =>
  JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString()) as { iat: number; exp: number; data: Record<string, unknown> };

describe('admin auth: login, tokens, session versions, impersonation, captcha', () => {
  let h: Harness;
  let adminId: number;
  let adminTokens: Tokens;

  before(async () => {
    h = await startHarness({ LOGIN_RATE_LIMIT_PER_USER: '3', CORS_ORIGINS: 'http://localhost:9527' });
    adminTokens = await h.login('admin', ADMIN_PASSWORD);
    adminId = (await h.sql<{ id: number }>(`SELECT id FROM users WHERE user_name = 'admin'`))[0].id;
  });
  after(async () => h?.stop());

  const userInfo = (token: string) => h.call<Record<string, unknown>>('GET', '/api/v1/auth/user-info', { token });
  const storedVersion = async (userId: number): Promise<number> => Number((await h.admin.services.kv.redis.get(`token_version:${userId}`)) ?? 0);

  describe('login', () => {
    it('issues access and refresh tokens with the spec payload and mustChangePassword', async () => {
      const reply = await h.call<Tokens>('POST', '/api/v1/auth/login', { body: { userName: 'admin', password: ADMIN_PASSWORD } });
      assert.equal(reply.status, 200);
      assert.equal(reply.code, '0000');
      assert.equal(reply.msg, 'OK');
      assert.equal(reply.data.mustChangePassword, false, 'the harness has done the seeded password change (test/admin/profile-password.test.ts covers it)');
      const access = payloadOf(reply.data.token);
      const refresh = payloadOf(reply.data.refreshToken);
      assert.deepEqual(access.data, { userId: adminId, userName: 'admin', tokenType: 'accessToken', tokenVersion: 0, impersonatorId: 0 });
      assert.equal(refresh.data.tokenType, 'refreshToken');
      assert.equal(access.exp - access.iat, 720 * 60, 'access token lives 12 hours by default');
      assert.equal(refresh.exp - refresh.iat, 10080 * 60, 'refresh token lives 7 days by default');
      const last = await h.sql<{ last_login: Date }>('SELECT last_login FROM users WHERE id = $1', [adminId]);
      assert.ok(Date.now() - last[0].last_login.getTime() < 60_000, 'last login is updated');
    });

    it('answers 2401 with the same message for a wrong password, an unknown user and missing fields', async () => {
      const wrong = await h.call('POST', '/api/v1/auth/login', { body: { userName: 'admin', password: 'nope-nope' } });
      const unknown = await h.call('POST', '/api/v1/auth/login', { body: { userName: 'ghost', password: 'whatever' } });
      const missing = await h.call('POST', '/api/v1/auth/login', { body: {} });
      for (const reply of [wrong, unknown, missing]) {
        assert.equal(reply.status, 200, 'failures are HTTP 200 for the Soybean client');
        assert.equal(reply.code, '2401');
        assert.equal(reply.data, null);
      }
      assert.equal(wrong.msg, unknown.msg);
    });

    it('accepts snake_case bodies', async () => {
      const reply = await h.call<Tokens>('POST', '/api/v1/auth/login', { body: { user_name: 'admin', password: ADMIN_PASSWORD } });
      assert.equal(reply.code, '0000');
    });

    it('refuses a disabled account with 2102 after the password check', async () => {
      const id = await h.createUser('disabled1', 'pass-123', ['R_USER']);
      await h.sql(`UPDATE users SET status_type = '2' WHERE id = $1`, [id]);
      assert.equal((await h.call('POST', '/api/v1/auth/login', { body: { userName: 'disabled1', password: 'wrong-pw' } })).code, '2401');
      assert.equal((await h.call('POST', '/api/v1/auth/login', { body: { userName: 'disabled1', password: 'pass-123' } })).code, '2102');
    });

    it('limits failed logins per user name (2500) without touching other names', async () => {
      await h.createUser('limited1', 'pass-123', ['R_USER']);
      for (let i = 0; i < 3; i++) assert.equal((await h.call('POST', '/api/v1/auth/login', { body: { userName: 'limited1', password: 'bad' } })).code, '2401');
      const blocked = await h.call('POST', '/api/v1/auth/login', { body: { userName: 'limited1', password: 'pass-123' } });
      assert.equal(blocked.code, '2500', 'even the right password is refused while the name is locked');
      assert.equal((await h.call('POST', '/api/v1/auth/login', { body: { userName: 'admin', password: ADMIN_PASSWORD } })).code, '0000');
    });

    it('answers CORS preflights for listed origins only', async () => {
      const preflight = (origin: string) =>
        fetch(`${h.url}/api/v1/auth/user-info`, {
          method: 'OPTIONS',
          headers: { origin, 'access-control-request-method': 'GET', 'access-control-request-headers': 'authorization,x-request-id,apifoxtoken' },
        });
      const allowed = await preflight('http://localhost:9527');
      assert.equal(allowed.status, 204);
      assert.equal(allowed.headers.get('access-control-allow-origin'), 'http://localhost:9527');
      assert.equal(allowed.headers.get('access-control-allow-headers'), 'authorization,x-request-id,apifoxtoken');
      const other = await preflight('http://evil.example');
      assert.equal(other.headers.get('access-control-allow-origin'), null);
      const simple = await fetch(`${h.url}/api/v1/route/constant-routes`, { headers: { origin: 'http://localhost:9527' } });
      assert.equal(simple.headers.get('access-control-allow-origin'), 'http://localhost:9527');
    });

    it('echoes X-Request-ID and generates one when absent', async () => {
      const given = await h.call('GET', '/api/v1/route/constant-routes', { headers: { 'x-request-id': 'req-abc-123' } });
      assert.equal(given.headers.get('x-request-id'), 'req-abc-123');
      const generated = await h.call('GET', '/api/v1/route/constant-routes');
      assert.match(generated.headers.get('x-request-id') ?? '', /^[0-9a-f-]{36}$/);
    });
  });

  describe('authentication check order on a protected request', () => {
    it('2100 without a bearer token and for a malformed or forged token', async () => {
      assert.equal((await h.call('GET', '/api/v1/auth/user-info')).code, '2100');
      assert.equal((await h.call('GET', '/api/v1/auth/user-info', { headers: { authorization: 'Basic abc' } })).code, '2100');
      assert.equal((await userInfo('not.a.jwt')).code, '2100');
      const parts = adminTokens.token.split('.');
      const forged = `${parts[0]}.${Buffer.from(JSON.stringify({ ...payloadOf(adminTokens.token), data: { ...payloadOf(adminTokens.token).data, userId: 2 } })).toString('base64url')}.${parts[2]}`;
      assert.equal((await userInfo(forged)).code, '2100', 'a changed payload breaks the signature');
    });

    it('2103 for an expired access token', async () => {
      const expired = await h.admin.services.tokens.sign(
        { userId: adminId, userName: 'admin', tokenType: 'accessToken', tokenVersion: 0, impersonatorId: 0 },
        60,
        Math.floor(Date.now() / 1000) - 3600,
      );
      assert.equal((await userInfo(expired)).code, '2103');
    });

    it('2101 for a refresh token used as access token and for an unknown user', async () => {
      assert.equal((await userInfo(adminTokens.refreshToken)).code, '2101');
      const ghost = await h.admin.services.tokens.sign({ userId: 999_999, userName: 'ghost', tokenType: 'accessToken', tokenVersion: 0, impersonatorId: 0 });
      assert.equal((await userInfo(ghost)).code, '2101');
    });

    it('2102 for a disabled user, then 2106 for the same token once re-enabled; a new login works', async () => {
      const id = await h.createUser('toggle1', 'pass-123', ['R_USER']);
      const tokens = await h.login('toggle1', 'pass-123');
      assert.equal((await userInfo(tokens.token)).code, '0000');
      const [row] = await h.sql<{ id: number }>(`SELECT id FROM users WHERE id = $1`, [id]);
      const sqid = h.admin.services.ids.encode(row.id);
      assert.equal((await h.call('PATCH', `/api/v1/system-manage/users/${sqid}`, { token: adminTokens.token, body: { statusType: '2' } })).code, '0000');
      assert.equal((await userInfo(tokens.token)).code, '2102', 'disabled reports 2102 first');
      assert.equal((await h.call('POST', '/api/v1/auth/refresh-token', { body: { refreshToken: tokens.refreshToken } })).code, '2102');
      assert.equal((await h.call('PATCH', `/api/v1/system-manage/users/${sqid}`, { token: adminTokens.token, body: { status_type: '1' } })).code, '0000');
      assert.equal((await userInfo(tokens.token)).code, '2106', 'tokens from before the disable never come back');
      assert.equal((await h.call('POST', '/api/v1/auth/refresh-token', { body: { refreshToken: tokens.refreshToken } })).code, '2106');
      const fresh = await h.login('toggle1', 'pass-123');
      assert.equal(payloadOf(fresh.token).data.tokenVersion, await storedVersion(id), 'new tokens carry the stored version');
      assert.equal((await userInfo(fresh.token)).code, '0000');
    });

    it('administrator-forced logout (offline and batch-offline) invalidates old tokens with 2106', async () => {
      const a = await h.createUser('offline1', 'pass-123', ['R_USER']);
      const b = await h.createUser('offline2', 'pass-123', ['R_USER']);
      const ta = await h.login('offline1', 'pass-123');
      const tb = await h.login('offline2', 'pass-123');
      const before = await storedVersion(a);
      assert.equal((await h.call('POST', `/api/v1/system-manage/users/${h.admin.services.ids.encode(a)}/offline`, { token: adminTokens.token })).code, '0000');
      assert.equal(await storedVersion(a), before + 1, 'the stored version is incremented by one');
      assert.equal((await userInfo(ta.token)).code, '2106');
      assert.equal((await userInfo(tb.token)).code, '0000');
      assert.equal(
        (await h.call('POST', '/api/v1/system-manage/users/batch-offline', { token: adminTokens.token, body: { ids: [h.admin.services.ids.encode(b)] } })).code,
        '0000',
      );
      assert.equal((await userInfo(tb.token)).code, '2106');
    });
  });

  describe('refresh', () => {
    it('issues a new access and refresh token that work', async () => {
      await h.createUser('refresh1', 'pass-123', ['R_USER']);
      const tokens = await h.login('refresh1', 'pass-123');
      await new Promise((r) => setTimeout(r, 1100)); // new iat, so new tokens differ
      const reply = await h.call<Tokens>('POST', '/api/v1/auth/refresh-token', { body: { refreshToken: tokens.refreshToken } });
      assert.equal(reply.code, '0000');
      assert.notEqual(reply.data.token, tokens.token);
      assert.notEqual(reply.data.refreshToken, tokens.refreshToken);
      assert.equal(payloadOf(reply.data.token).data.tokenType, 'accessToken');
      assert.equal(payloadOf(reply.data.refreshToken).data.tokenType, 'refreshToken');
      assert.equal((await userInfo(reply.data.token)).code, '0000');
    });

    it('2104 without a refresh token, 2105 for an access token, 2100 for garbage', async () => {
      assert.equal((await h.call('POST', '/api/v1/auth/refresh-token', { body: {} })).code, '2104');
      assert.equal((await h.call('POST', '/api/v1/auth/refresh-token', { body: { refreshToken: adminTokens.token } })).code, '2105');
      assert.equal((await h.call('POST', '/api/v1/auth/refresh-token', { body: { refreshToken: 'garbage' } })).code, '2100');
    });

    it('never answers 2103 for an expired refresh token (the client would loop)', async () => {
      const expired = await h.admin.services.tokens.sign(
        { userId: adminId, userName: 'admin', tokenType: 'refreshToken', tokenVersion: 0, impersonatorId: 0 },
        60,
        Math.floor(Date.now() / 1000) - 3600,
      );
      const reply = await h.call('POST', '/api/v1/auth/refresh-token', { body: { refreshToken: expired } });
      assert.notEqual(reply.code, '2103');
      assert.notEqual(reply.code, '0000');
      assert.equal(reply.code, '2107');
    });

    it('2106 when the refresh token version is lower than the stored one', async () => {
      const id = await h.createUser('refresh2', 'pass-123', ['R_USER']);
      const tokens = await h.login('refresh2', 'pass-123');
      await h.admin.services.sessions.invalidate([id]);
      assert.equal((await h.call('POST', '/api/v1/auth/refresh-token', { body: { refreshToken: tokens.refreshToken } })).code, '2106');
    });
  });

  describe('password change', () => {
    it('2405 for a wrong old password; success bumps the version, clears mustChangePassword and kills old tokens', async () => {
      const id = await h.createUser('pw1', 'pass-123', ['R_USER']);
      await h.sql('UPDATE users SET must_change_password = true WHERE id = $1', [id]);
      const tokens = await h.login('pw1', 'pass-123');
      assert.equal(
        (await h.call('PATCH', '/api/v1/auth/password', { token: tokens.token, body: { oldPassword: 'wrong-1', newPassword: 'pass-456' } })).code,
        '2405',
      );
      const before = await storedVersion(id);
      const changed = await h.call('PATCH', '/api/v1/auth/password', { token: tokens.token, body: { old_password: 'pass-123', new_password: 'pass-456' } });
      assert.equal(changed.code, '0000');
      assert.match(changed.msg, /log in again/);
      assert.equal(await storedVersion(id), before + 1);
      assert.equal((await userInfo(tokens.token)).code, '2106');
      assert.equal((await h.call('POST', '/api/v1/auth/refresh-token', { body: { refreshToken: tokens.refreshToken } })).code, '2106');
      assert.equal((await h.call('POST', '/api/v1/auth/login', { body: { userName: 'pw1', password: 'pass-123' } })).code, '2401');
      const relogin = await h.call<Tokens>('POST', '/api/v1/auth/login', { body: { userName: 'pw1', password: 'pass-456' } });
      assert.equal(relogin.data.mustChangePassword, false);
      assert.equal((await userInfo(relogin.data.token)).code, '0000');
    });
  });

  describe('impersonation', () => {
    it('2206 for a caller without R_SUPER', async () => {
      const target = await h.createUser('imp-target0', 'pass-123', ['R_USER']);
      await h.createUser('imp-admin', 'pass-123', ['R_ADMIN']);
      const tokens = await h.login('imp-admin', 'pass-123');
      const reply = await h.call('POST', `/api/v1/auth/impersonate/${h.admin.services.ids.encode(target)}`, { token: tokens.token });
      assert.equal(reply.code, '2206');
    });

    it('issues target tokens carrying impersonatorId; user-info shows it; refresh keeps it; exit invalidates', async () => {
      const target = await h.createUser('imp-target', 'pass-123', ['R_USER']);
      const own = await h.login('imp-target', 'pass-123');
      const reply = await h.call<Tokens>('POST', `/api/v1/auth/impersonate/${h.admin.services.ids.encode(target)}`, { token: adminTokens.token });
      assert.equal(reply.code, '0000');
      assert.equal(payloadOf(reply.data.token).data.userId, target);
      assert.equal(payloadOf(reply.data.token).data.impersonatorId, adminId);
      const info = await userInfo(reply.data.token);
      assert.equal(info.data.userName, 'imp-target');
      assert.equal(info.data.impersonating, true);
      assert.equal(info.data.impersonatorId, h.admin.services.ids.encode(adminId), 'impersonatorId is a sqid, not a raw integer');
      assert.deepEqual(info.data.roles, ['R_USER']);
      assert.equal((await userInfo(own.token)).data.impersonating, undefined, 'ordinary sessions are not marked');
      const refreshed = await h.call<Tokens>('POST', '/api/v1/auth/refresh-token', { body: { refreshToken: reply.data.refreshToken } });
      assert.equal(payloadOf(refreshed.data.token).data.impersonatorId, adminId);
      assert.equal((await h.call('POST', '/api/v1/auth/impersonate/exit', { token: own.token })).code, '2400', 'exit needs an impersonation');
      assert.equal((await h.call('POST', '/api/v1/auth/impersonate/exit', { token: reply.data.token })).code, '0000');
      assert.equal((await userInfo(reply.data.token)).code, '2106');
      assert.equal((await userInfo(refreshed.data.token)).code, '2106');
      assert.equal((await userInfo(adminTokens.token)).code, '0000', 'the administrator stays logged in');
    });

    it('2406 for an unknown target, 1200 for a malformed id, 2102 for a disabled target', async () => {
      assert.equal((await h.call('POST', `/api/v1/auth/impersonate/${h.admin.services.ids.encode(987_654)}`, { token: adminTokens.token })).code, '2406');
      assert.equal((await h.call('POST', '/api/v1/auth/impersonate/12', { token: adminTokens.token })).code, '1200');
      const off = await h.createUser('imp-off', 'pass-123', ['R_USER']);
      await h.sql(`UPDATE users SET status_type = '2' WHERE id = $1`, [off]);
      assert.equal((await h.call('POST', `/api/v1/auth/impersonate/${h.admin.services.ids.encode(off)}`, { token: adminTokens.token })).code, '2102');
    });
  });

  describe('captcha, code login and registration', () => {
    const phone = '13800000001';
    const cachedCode = async (): Promise<string | null> => h.admin.services.kv.redis.get(`captcha:${phone}`);

    it('caches a 6-digit captcha for 5 minutes', async () => {
      assert.equal((await h.call('POST', '/api/v1/auth/captcha', { body: { phone } })).code, '0000');
      assert.match((await cachedCode()) ?? '', /^\d{6}$/);
      const ttl = await h.admin.services.kv.redis.ttl(`captcha:${phone}`);
      assert.ok(ttl > 290 && ttl <= 300, `ttl ${ttl}`);
      assert.equal((await h.call('POST', '/api/v1/auth/captcha', { body: { phone: 'abc' } })).code, '1200');
    });

    it('registers with R_USER after captcha verification; a code works once', async () => {
      await h.call('POST', '/api/v1/auth/captcha', { body: { phone } });
      const code = (await cachedCode()) as string;
      assert.equal(
        (await h.call('POST', '/api/v1/auth/register', { body: { phone, code: code === '000000' ? '111111' : '000000', password: 'reg-pass-1' } })).code,
        '2402',
      );
      const reply = await h.call('POST', '/api/v1/auth/register', { body: { phone, code, password: 'reg-pass-1' } });
      assert.equal(reply.code, '0000');
      const rows = await h.sql<{ user_name: string; role_code: string }>(
        'SELECT u.user_name, r.role_code FROM users u JOIN user_roles ur ON ur.user_id = u.id JOIN roles r ON r.id = ur.role_id WHERE u.user_phone = $1',
        [phone],
      );
      assert.deepEqual(rows, [{ user_name: phone, role_code: 'R_USER' }]);
      assert.equal(
        (await h.call('POST', '/api/v1/auth/register', { body: { phone, code, password: 'reg-pass-1', userName: 'other' } })).code,
        '2402',
        'the code was used up',
      );
      assert.equal((await h.call<Tokens>('POST', '/api/v1/auth/login', { body: { userName: phone, password: 'reg-pass-1' } })).code, '0000');
    });

    it('logs in by captcha; unknown phone gives 2404', async () => {
      await h.call('POST', '/api/v1/auth/captcha', { body: { phone } });
      const reply = await h.call<Tokens>('POST', '/api/v1/auth/code-login', { body: { phone, code: (await cachedCode()) as string } });
      assert.equal(reply.code, '0000');
      assert.equal((await userInfo(reply.data.token)).data.userName, phone);
      await h.call('POST', '/api/v1/auth/captcha', { body: { phone: '13900000009' } });
      const code = (await h.admin.services.kv.redis.get('captcha:13900000009')) as string;
      assert.equal((await h.call('POST', '/api/v1/auth/code-login', { body: { phone: '13900000009', code } })).code, '2404');
    });
  });

  describe('user-info and audit', () => {
    it('returns the user with sqid userId, enabled role codes and buttons', async () => {
      const info = await userInfo(adminTokens.token);
      assert.equal(info.code, '0000');
      assert.equal(info.data.userId, h.admin.services.ids.encode(adminId));
      assert.deepEqual(info.data.roles, ['R_SUPER']);
      assert.ok((info.data.buttons as string[]).includes('B_SYSTEM_USER_CREATE'), 'R_SUPER holds every button');
      assert.equal(info.data.password, undefined);
      assert.equal(typeof info.data.lastLogin, 'number');
    });

    it('writes audit records for logins, impersonation, password and session changes without secrets', async () => {
      const audits = h.logs.filter((l) => l.audit === true);
      const actions = new Set(audits.map((l) => l.action));
      for (const action of ['login.success', 'login.failure', 'impersonation.start', 'impersonation.exit', 'password.change', 'session.invalidate'])
        assert.ok(actions.has(action), `audit ${action}`);
      const text = JSON.stringify(h.logs);
      assert.ok(!text.includes(ADMIN_PASSWORD), 'no password in any log line');
      assert.ok(!text.includes('pass-123'), 'no user password in any log line');
      assert.ok(!text.includes(adminTokens.token) && !text.includes(adminTokens.refreshToken), 'no token in any log line');
    });
  });
});
