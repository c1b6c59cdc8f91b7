import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { userCenterMenu } from '../../admin/db/migrations/0002-user-center-menu.js';
import { ADMIN_PASSWORD, startHarness, type Harness } from './support.js';

type Tokens = { token: string; refreshToken: string; mustChangePassword?: boolean };
type Rec = Record<string, unknown>;
interface RouteNode {
  name: string;
  component?: string;
  meta?: Rec;
  children?: RouteNode[];
}

const flatten = (nodes: RouteNode[]): RouteNode[] => nodes.flatMap((n) => [n, ...flatten(n.children ?? [])]);

describe('admin self-service: user center route, profile, password reset, mustChangePassword', () => {
  let h: Harness;

  before(async () => {
    h = await startHarness({ LOGIN_RATE_LIMIT_PER_USER: '3' }, { keepSeededPasswordChange: true });
  });
  after(async () => h?.stop());

  const call = <T = Rec>(method: string, path: string, token?: string, body?: unknown, headers?: Record<string, string>) =>
    h.call<T>(method, `/api/v1${path}`, { token, body, headers });
  const login = (userName: string, password: string) => h.call<Tokens>('POST', '/api/v1/auth/login', { body: { userName, password } });

  it('seeds the user-center page the clients link from the avatar menu, granted to R_ADMIN and R_USER', async () => {
    const [menu] = await h.sql<{ route_path: string; component: string; hide_in_menu: boolean; constant: boolean }>(
      `SELECT * FROM menus WHERE route_name = 'user-center'`,
    );
    assert.ok(menu, 'user-center menu seeded');
    assert.equal(menu.route_path, '/user-center');
    assert.equal(menu.component, 'layout.base$view.user-center');
    assert.equal(menu.hide_in_menu, true);
    assert.equal(menu.constant, false);
    const roles = await h.sql<{ role_code: string }>(
      `SELECT r.role_code FROM role_menus rm JOIN roles r ON r.id = rm.role_id JOIN menus m ON m.id = rm.menu_id WHERE m.route_name = 'user-center' ORDER BY 1`,
    );
    assert.deepEqual(
      roles.map((r) => r.role_code),
      ['R_ADMIN', 'R_USER'],
    );
    await h.createUser('uc-user', 'pass-123', ['R_USER']);
    const tokens = (await login('uc-user', 'pass-123')).data;
    const routes = await call<{ routes: RouteNode[] }>('GET', '/route/user-routes', tokens.token);
    const node = flatten(routes.data.routes).find((r) => r.name === 'user-center');
    assert.equal(node?.component, 'layout.base$view.user-center', 'R_USER gets the route');
    assert.equal(node?.meta?.hideInMenu, true);
  });

  it('the upgrade migration adds user-center to a database seeded without it, next to each home grant', async () => {
    await h.sql(`DELETE FROM menus WHERE route_name = 'user-center'`);
    await h.sql(userCenterMenu.sql);
    const roles = await h.sql<{ role_code: string }>(
      `SELECT r.role_code FROM role_menus rm JOIN roles r ON r.id = rm.role_id JOIN menus m ON m.id = rm.menu_id WHERE m.route_name = 'user-center' ORDER BY 1`,
    );
    assert.deepEqual(
      roles.map((r) => r.role_code),
      ['R_ADMIN', 'R_USER'],
    );
    await h.sql(userCenterMenu.sql);
    assert.equal((await h.sql(`SELECT 1 FROM menus WHERE route_name = 'user-center'`)).length, 1, 'running it again adds nothing');
  });

  it('a seeded administrator with mustChangePassword reads every page but changes nothing until the password is changed', async () => {
    const first = await login('admin', ADMIN_PASSWORD);
    assert.equal(first.data.mustChangePassword, true);
    const token = first.data.token;
    const info = await call('GET', '/auth/user-info', token);
    assert.equal(info.code, '0000');
    assert.equal(info.data.mustChangePassword, true);
    assert.equal((await call('GET', '/route/user-routes', token)).code, '0000', 'routes load, so the client can show the password page');
    // Every page of a client without a password form loads (no 2108 on each page) ...
    assert.equal((await call('POST', '/system-manage/users/search', token, {})).code, '0000');
    assert.equal((await call('GET', '/system-manage/menus/tree', token)).code, '0000');
    assert.notEqual((await call('POST', '/business/database-clusters/clusters/search', token, {})).code, '2108');
    // ... while changes wait, saying how to get out.
    const blocked = await call('PATCH', '/auth/profile', token, { nickName: 'x' });
    assert.equal(blocked.status, 200);
    assert.equal(blocked.code, '2108');
    assert.match(blocked.msg, /change your password first \(user center, or your own user in user management\)/);
    assert.equal(
      (await call('POST', '/system-manage/users', token, { userName: 'held-new', password: 'pass-123', byUserRoleCodeList: ['R_USER'] })).code,
      '2108',
    );
    assert.equal(
      (await call('POST', '/system-manage/dictionaries', token, { dictType: 'held', label: 'a', value: 'a' }, { 'accept-language': 'zh-CN' })).msg,
      '请先修改密码（个人中心，或在用户管理中编辑自己的账号）；修改前只能查看，不能更改',
    );
    const refreshed = await call<Tokens>('POST', '/auth/refresh-token', undefined, { refreshToken: first.data.refreshToken });
    assert.equal(refreshed.code, '0000', 'refresh keeps working');

    const changed = await call<Tokens>('POST', '/auth/reset-password', token, { oldPassword: ADMIN_PASSWORD, newPassword: 'admin-pass-2' });
    assert.equal(changed.code, '0000', changed.msg);
    assert.ok(changed.data.token && changed.data.refreshToken, 'the caller carries on with fresh tokens');
    assert.equal((await call('POST', '/system-manage/users/search', changed.data.token, {})).code, '0000', 'full access after the change');
    assert.equal((await call('GET', '/auth/user-info', changed.data.token)).data.mustChangePassword, false);
    assert.equal((await call('GET', '/auth/user-info', token)).code, '2106', 'the session that asked is replaced by the fresh one');
    assert.equal((await login('admin', ADMIN_PASSWORD)).code, '2401');
    const again = await login('admin', 'admin-pass-2');
    assert.equal(again.data.mustChangePassword, false);
    const [row] = await h.sql<{ password: string }>(`SELECT password FROM users WHERE user_name = 'admin'`);
    assert.match(row.password, /^\$argon2id\$/);
  });

  it('a client without a password form gets out through the user editor: saving the own user with a new password', async () => {
    const id = await h.createUser('uc-editor', 'pass-123', ['R_ADMIN']);
    const other = await h.createUser('uc-editor-peer', 'pass-123', ['R_USER']);
    await h.sql('UPDATE users SET must_change_password = true WHERE id = $1', [id]);
    const { token } = (await login('uc-editor', 'pass-123')).data;
    const own = h.admin.services.ids.encode(id);
    // The older client's editor sends the whole record back.
    const record = (await call<Rec>('GET', `/system-manage/users/${own}`, token)).data;
    assert.equal(
      (await call('PATCH', `/system-manage/users/${own}`, token, { ...record, nickName: 'renamed' })).code,
      '2108',
      'a save without a new password is a change like any other',
    );
    assert.equal(
      (await call('PATCH', `/system-manage/users/${h.admin.services.ids.encode(other)}`, token, { password: 'pass-456' })).code,
      '2108',
      "another user's password is no way out",
    );
    const saved = await call('PATCH', `/system-manage/users/${own}`, token, { nickName: 'renamed', password: 'pass-789', byUserRoleCodeList: ['R_ADMIN'] });
    assert.equal(saved.code, '0000', saved.msg);
    assert.equal(saved.data.mustChangePassword, false);
    assert.equal((await call('GET', '/auth/user-info', token)).code, '2106', 'a new password ends the old sessions');
    const next = await login('uc-editor', 'pass-789');
    assert.equal(next.data.mustChangePassword, false);
    assert.equal((await call('PATCH', '/auth/profile', next.data.token, { nickName: 'free' })).code, '0000');
  });

  it('the client path PATCH /auth/password is open while a change is pending and lifts it', async () => {
    const id = await h.createUser('uc-pending', 'pass-123', ['R_USER']);
    await h.sql('UPDATE users SET must_change_password = true WHERE id = $1', [id]);
    const { token } = (await login('uc-pending', 'pass-123')).data;
    assert.equal((await call('GET', '/route/exists?name=home', token)).code, '0000');
    assert.equal((await call('PATCH', '/auth/profile', token, { nickName: 'n' })).code, '2108');
    assert.equal((await call('PATCH', '/auth/password', token, { oldPassword: 'pass-123', newPassword: 'pass-456' })).code, '0000');
    const next = (await login('uc-pending', 'pass-456')).data;
    assert.equal((await call('PATCH', '/auth/profile', next.token, { nickName: 'n' })).code, '0000');
  });

  it('reset-password ends every other session and refresh token; a wrong old password changes nothing', async () => {
    await h.createUser('uc-reset', 'pass-123', ['R_USER']);
    const a = (await login('uc-reset', 'pass-123')).data;
    const b = (await login('uc-reset', 'pass-123')).data;
    const wrong = await call('POST', '/auth/reset-password', a.token, { oldPassword: 'nope-123', newPassword: 'pass-789' });
    assert.equal(wrong.code, '2405');
    assert.equal((await call('GET', '/auth/user-info', b.token)).code, '0000', 'a refused change ends no session');
    assert.equal((await login('uc-reset', 'pass-123')).code, '0000', 'and keeps the password');
    const ok = await call<Tokens>('POST', '/auth/reset-password', a.token, { oldPassword: 'pass-123', newPassword: 'pass-789' });
    assert.equal(ok.code, '0000');
    assert.equal((await call('GET', '/auth/user-info', ok.data.token)).code, '0000');
    assert.equal((await call('GET', '/auth/user-info', b.token)).code, '2106');
    assert.equal((await call('POST', '/auth/refresh-token', undefined, { refreshToken: b.refreshToken })).code, '2106');
    assert.equal((await call('POST', '/auth/refresh-token', undefined, { refreshToken: ok.data.refreshToken })).code, '0000');
    assert.equal((await login('uc-reset', 'pass-789')).code, '0000');
  });

  it('reset-password refuses bad input with 1200 naming the field, and needs a session for the old-password form', async () => {
    await h.createUser('uc-bad', 'pass-123', ['R_USER']);
    const { token } = (await login('uc-bad', 'pass-123')).data;
    const cases: [unknown, RegExp][] = [
      [{ oldPassword: 'pass-123', newPassword: '123' }, /newPassword/],
      [{ oldPassword: 'pass-123', newPassword: 'x'.repeat(129) }, /newPassword/],
      [{ oldPassword: 123456, newPassword: 'pass-456' }, /oldPassword/],
      [{ oldPassword: 'pass-123' }, /newPassword/],
      [{ oldPassword: 'pass-123', newPassword: 'pass-123' }, /newPassword: must differ/],
      [{ oldPassword: 'pass-123', newPassword: 'pass-456', userName: 'other' }, /userName/],
      [{ phone: '12345678901', code: 'abc' }, /password/],
      [{ phone: 'not-a-phone', code: '123456', password: 'pass-456' }, /phone/],
    ];
    for (const [body, field] of cases) {
      const reply = await call('POST', '/auth/reset-password', token, body);
      assert.equal(reply.code, '1200', JSON.stringify(body));
      assert.match(reply.msg, field, JSON.stringify(body));
    }
    assert.equal((await h.call('POST', '/api/v1/auth/reset-password', { token, raw: '{"oldPassword":' })).code, '1200');
    assert.equal((await login('uc-bad', 'pass-123')).code, '0000', 'nothing changed');
    assert.equal((await call('POST', '/auth/reset-password', undefined, { oldPassword: 'pass-123', newPassword: 'pass-456' })).code, '2100');
  });

  it('reset-password by phone captcha (the login page form) sets the password and ends every session', async () => {
    const id = await h.createUser('uc-phone', 'pass-123', ['R_USER']);
    await h.sql(`UPDATE users SET user_phone = '13800000001' WHERE id = $1`, [id]);
    const session = (await login('uc-phone', 'pass-123')).data;
    assert.equal((await call('POST', '/auth/captcha', undefined, { phone: '13800000001' })).code, '0000');
    const code = await h.admin.services.kv.redis.get('captcha:13800000001');
    assert.equal(
      (await call('POST', '/auth/reset-password', undefined, { phone: '13800000001', code: '000000' === code ? '111111' : '000000', password: 'pass-456' }))
        .code,
      '2402',
    );
    assert.equal((await call('POST', '/auth/captcha', undefined, { phone: '13800000001' })).code, '0000');
    const fresh = await h.admin.services.kv.redis.get('captcha:13800000001');
    assert.equal((await call('POST', '/auth/reset-password', undefined, { phone: '13800000001', code: fresh, password: 'pass-456' })).code, '0000');
    assert.equal((await call('GET', '/auth/user-info', session.token)).code, '2106');
    assert.equal((await login('uc-phone', 'pass-456')).code, '0000');
    assert.equal((await call('POST', '/auth/captcha', undefined, { phone: '13800000009' })).code, '0000');
    const other = await h.admin.services.kv.redis.get('captcha:13800000009');
    assert.equal((await call('POST', '/auth/reset-password', undefined, { phone: '13800000009', code: other, password: 'pass-456' })).code, '2404');
  });

  it('PATCH /auth/profile changes the own nick name, gender, email and phone and answers the new user-info', async () => {
    await h.createUser('uc-profile', 'pass-123', ['R_USER']);
    const { token } = (await login('uc-profile', 'pass-123')).data;
    const reply = await call('PATCH', '/auth/profile', token, { nickName: 'Ada', userGender: '2', userEmail: 'ada@example.com', userPhone: '13900000002' });
    assert.equal(reply.code, '0000', reply.msg);
    assert.equal(reply.data.userName, 'uc-profile');
    assert.equal(reply.data.nickName, 'Ada');
    assert.equal(reply.data.userGender, '2');
    assert.equal(reply.data.userEmail, 'ada@example.com');
    assert.equal(reply.data.userPhone, '13900000002');
    assert.deepEqual(reply.data.roles, ['R_USER'], 'the client merges this answer into its user-info');
    const info = await call('GET', '/auth/user-info', token);
    assert.equal(info.data.nickName, 'Ada');
    assert.equal(info.data.userEmail, 'ada@example.com');
    // The client sends cleared fields as null.
    const cleared = await call('PATCH', '/auth/profile', token, { nickName: 'Ada', userGender: '2', userEmail: null, userPhone: null });
    assert.equal(cleared.data.userEmail, null);
    assert.equal(cleared.data.userPhone, null);
    await h.createUser('uc-other', 'pass-123', ['R_USER']);
    await h.sql(`UPDATE users SET user_email = 'taken@example.com' WHERE user_name = 'uc-other'`);
    assert.equal((await call('PATCH', '/auth/profile', token, { userEmail: 'taken@example.com' })).code, '2302');
  });

  it('PATCH /auth/profile refuses bad input and any role, status or name change with 1200', async () => {
    const id = await h.createUser('uc-strict', 'pass-123', ['R_USER']);
    const { token } = (await login('uc-strict', 'pass-123')).data;
    const cases: [unknown, RegExp][] = [
      [{ userEmail: 'not-an-email' }, /userEmail/],
      [{ userPhone: 'abc' }, /userPhone/],
      [{ userGender: '9' }, /userGender/],
      [{ nickName: 'x'.repeat(31) }, /nickName/],
      [{ nickName: 42 }, /nickName/],
      [{ statusType: '2' }, /statusType/],
      [{ byUserRoleCodeList: ['R_SUPER'] }, /byUserRoleCodeList/],
      [{ userName: 'renamed' }, /userName/],
      [{ mustChangePassword: false }, /mustChangePassword/],
      [{ nickName: 'a\u0000b' }, /nickName/],
      [[1, 2], /body|expected/i],
    ];
    for (const [body, field] of cases) {
      const reply = await call('PATCH', '/auth/profile', token, body);
      assert.equal(reply.code, '1200', JSON.stringify(body));
      assert.match(reply.msg, field, JSON.stringify(body));
    }
    const [row] = await h.sql<{ user_name: string; status_type: string; nick_name: string }>('SELECT * FROM users WHERE id = $1', [id]);
    assert.deepEqual([row.user_name, row.status_type, row.nick_name], ['uc-strict', '1', 'uc-strict']);
    const roles = await h.sql<{ role_code: string }>('SELECT r.role_code FROM user_roles ur JOIN roles r ON r.id = ur.role_id WHERE ur.user_id = $1', [id]);
    assert.deepEqual(
      roles.map((r) => r.role_code),
      ['R_USER'],
    );
  });

  it("an impersonating super administrator is not held by the target user's pending password change", async () => {
    const id = await h.createUser('uc-imp', 'pass-123', ['R_USER']);
    await h.sql('UPDATE users SET must_change_password = true WHERE id = $1', [id]);
    const admin = (await login('admin', 'admin-pass-2')).data;
    const imp = await call<Tokens>('POST', `/auth/impersonate/${h.admin.services.ids.encode(id)}`, admin.token);
    assert.equal(imp.code, '0000');
    assert.equal((await call('PATCH', '/auth/profile', imp.data.token, { nickName: 'seen by support' })).code, '0000');
  });
});
