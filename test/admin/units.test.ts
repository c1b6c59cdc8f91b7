import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sanitize } from '../../admin/resources/audit.js';
import { camelizeBody, camelKey, snakeKey } from '../../admin/http/case.js';
import { orderClause } from '../../admin/resources/crud.js';
import { alphabetFromSecret, createIdCodec } from '../../admin/resources/ids.js';
import { checkApiPermission, checkButtons, checkRoles, poolGrants } from '../../admin/auth/permissions.js';
import { createRateLimiter } from '../../admin/http/rate-limit.js';
import { ApiRouter } from '../../admin/http/router.js';
import { createTokenService } from '../../admin/auth/tokens.js';
import { leafMenuIds, withAncestors } from '../../admin/modules/system-manage/roles.js';
import { buildRouteTree, type MenuRow } from '../../admin/modules/route/routes.js';

describe('admin units', () => {
  it('sqids: alphabet derived from SECRET_KEY, canonical ids only', () => {
    const a = alphabetFromSecret('secret-one');
    assert.equal(a.length, 62);
    assert.equal(new Set(a).size, 62, 'a permutation of a-zA-Z0-9');
    assert.equal(alphabetFromSecret('secret-one'), a, 'deterministic');
    assert.notEqual(alphabetFromSecret('secret-two'), a);
    const ids = createIdCodec('secret-one');
    const encoded = ids.encode(42);
    assert.ok(encoded.length >= 8);
    assert.equal(ids.decode(encoded), 42);
    assert.notEqual(createIdCodec('secret-two').encode(42), encoded);
    for (const bad of ['', '42', 42, null, encoded + 'x', 'a'.repeat(33)]) assert.equal(ids.tryDecode(bad), undefined, String(bad));
    assert.throws(() => ids.decode('nope', 'userId'), /userId: invalid id/);
  });

  it('bodies accept snake_case; camelCase wins when both are sent', () => {
    assert.equal(camelKey('by_user_role_code_list'), 'byUserRoleCodeList');
    assert.equal(snakeKey('mustChangePassword'), 'must_change_password');
    assert.deepEqual(camelizeBody({ user_name: 'a', userName: 'b', size: 3 }), { userName: 'b', size: 3 });
    assert.deepEqual(camelizeBody([1]), [1]);
    assert.deepEqual(camelizeBody({ by_menu_buttons: [{ button_code: 'B_X', button_desc: 'a_b' }] }), {
      byMenuButtons: [{ buttonCode: 'B_X', buttonDesc: 'a_b' }],
    });
  });

  it('API permission: super bypass, 2207, exact template, enable wins when pooled', () => {
    const grants = poolGrants([
      { method: 'GET', path: '/r/{id}', status: '1' },
      { method: 'get', path: '/x', status: '2' },
      { method: 'get', path: '/y', status: '2' },
      { method: 'get', path: '/y', status: '1' },
    ]);
    assert.equal(checkApiPermission(['R_SUPER'], new Map(), 'post', '/anything'), undefined);
    assert.equal(checkApiPermission([], grants, 'get', '/r/{id}')?.code, '2207');
    assert.equal(checkApiPermission(['R'], grants, 'GET', '/r/{id}'), undefined);
    assert.equal(checkApiPermission(['R'], grants, 'get', '/r/sync')?.code, '2201');
    assert.equal(checkApiPermission(['R'], grants, 'post', '/r/{id}')?.code, '2201');
    assert.equal(checkApiPermission(['R'], grants, 'get', '/x')?.code, '2200');
    assert.equal(checkApiPermission(['R'], grants, 'get', '/y'), undefined);
  });

  it('button and role checks: any-of and all-of codes', () => {
    assert.equal(checkButtons(['R'], ['B_A'], ['B_A', 'B_B']), undefined);
    assert.equal(checkButtons(['R'], [], ['B_A', 'B_B'])?.code, '2203');
    assert.equal(checkButtons(['R'], ['B_A'], ['B_A', 'B_B'], true)?.code, '2202');
    assert.match(checkButtons(['R'], ['B_A'], ['B_A', 'B_B'], true)?.msg ?? '', /B_B/);
    assert.equal(checkButtons(['R_SUPER'], [], ['B_A'], true), undefined);
    assert.equal(checkRoles(['R_A'], ['R_A', 'R_B']), undefined);
    assert.equal(checkRoles(['R_C'], ['R_A', 'R_B'])?.code, '2205');
    assert.equal(checkRoles(['R_A'], ['R_A', 'R_B'], true)?.code, '2204');
    assert.equal(checkRoles(['R_SUPER'], ['R_A'], true), undefined);
  });

  it('orderBy is whitelisted', () => {
    const fields = {
      id: { column: 'id', kind: 'id' as const },
      userName: { column: 'user_name', kind: 'text' as const, orderable: true },
      password: { column: 'password', kind: 'text' as const },
    };
    assert.equal(orderClause(['-userName', 'id'], fields, 'id ASC'), '"user_name" DESC, "id" ASC, id ASC, id ASC');
    assert.throws(() => orderClause(['password'], fields, 'id ASC'), /cannot sort by "password"/);
    assert.throws(() => orderClause(['nope'], fields, 'id ASC'), /cannot sort/);
  });

  it('routers mount static paths before parameter paths and refuse trailing slashes', () => {
    const router = new ApiRouter('/p', { guard: 'permission', tags: ['t'] });
    const handler = async () => undefined;
    router.get('/menus/{id}', { summary: 'one' }, handler).get('/menus/tree', { summary: 'tree' }, handler);
    assert.deepEqual(
      router.mounted().map((r) => r.template),
      ['/p/menus/tree', '/p/menus/{id}'],
    );
    assert.throws(() => router.get('/menus/', { summary: 'x' }, handler), /trailing slash/);
  });

  it('tokens: spec payload, expiry reported separately from invalid', async () => {
    const tokens = createTokenService({ secretKey: 'unit-secret-key-123456', algorithm: 'HS256', accessTokenMinutes: 1, refreshTokenMinutes: 2 });
    const pair = await tokens.issuePair({ userId: 7, userName: 'u', tokenVersion: 3, impersonatorId: 0 });
    const ok = await tokens.verify(pair.token);
    assert.ok(ok.ok && ok.payload.data.tokenType === 'accessToken' && ok.payload.data.tokenVersion === 3 && ok.payload.exp - ok.payload.iat === 60);
    const expired = await tokens.sign(
      { userId: 7, userName: 'u', tokenType: 'accessToken', tokenVersion: 0, impersonatorId: 0 },
      10,
      Math.floor(Date.now() / 1000) - 100,
    );
    assert.deepEqual(await tokens.verify(expired), { ok: false, reason: 'expired' });
    const other = createTokenService({ secretKey: 'another-secret-key-1234', algorithm: 'HS256', accessTokenMinutes: 1, refreshTokenMinutes: 1 });
    assert.deepEqual(await other.verify(pair.token), { ok: false, reason: 'invalid' });
    const hs512 = createTokenService({ secretKey: 'unit-secret-key-123456', algorithm: 'HS512', accessTokenMinutes: 1, refreshTokenMinutes: 1 });
    assert.deepEqual(await hs512.verify(pair.token), { ok: false, reason: 'invalid' }, 'the algorithm is pinned');
  });

  it('login rate limiter: fixed window per key', () => {
    const limiter = createRateLimiter(60);
    const t0 = 1_000_000;
    for (let i = 0; i < 3; i++) assert.equal(limiter.hit('k', 3, t0), 0);
    assert.equal(limiter.hit('k', 3, t0 + 1000), 59);
    assert.equal(limiter.hit('other', 3, t0 + 1000), 0);
    assert.equal(limiter.hit('k', 3, t0 + 60_000), 0, 'a new window starts');
  });

  it('audit details lose secrets', () => {
    assert.deepEqual(sanitize({ userName: 'a', password: 'p', refreshToken: 't', nested: { oldPassword: 'x', ok: 1 }, code: '123456', resultCode: '2201' }), {
      userName: 'a',
      password: '[redacted]',
      refreshToken: '[redacted]',
      nested: { oldPassword: '[redacted]', ok: 1 },
      code: '[redacted]',
      resultCode: '2201',
    });
  });

  it('role menu grants: ancestors added, leaves read back', () => {
    const parentOf = new Map([
      [1, 0],
      [2, 1],
      [3, 1],
      [4, 0],
    ]);
    assert.deepEqual(withAncestors([2, 4], parentOf).sort(), [1, 2, 4]);
    assert.deepEqual(leafMenuIds([1, 2, 4], parentOf), [2, 4]);
  });

  it('route tree: nested by parent, sorted by order, empty catalogs dropped, local icons and activeMenu', () => {
    const base: MenuRow = {
      id: 0,
      menu_name: '',
      menu_type: '2',
      route_name: '',
      route_path: '',
      parent_id: 0,
      path_param: null,
      route_param: null,
      component: null,
      redirect: null,
      props: false,
      constant: false,
      order: 0,
      i18n_key: null,
      icon: null,
      icon_type: '1',
      href: null,
      multi_tab: false,
      keep_alive: false,
      hide_in_menu: false,
      active_menu_id: null,
      fixed_index_in_tab: null,
      status_type: '1',
    };
    const tree = buildRouteTree([
      { ...base, id: 1, route_name: 'manage', route_path: '/manage', menu_type: '1', order: 2 },
      { ...base, id: 2, route_name: 'manage_user', route_path: '/manage/user', parent_id: 1, order: 1, icon: 'user', icon_type: '2' },
      {
        ...base,
        id: 3,
        route_name: 'manage_user-detail',
        route_path: '/manage/user-detail/:id',
        parent_id: 1,
        order: 2,
        hide_in_menu: true,
        active_menu_id: 2,
      },
      { ...base, id: 4, route_name: 'empty', route_path: '/empty', menu_type: '1', order: 3 },
      { ...base, id: 5, route_name: 'home', route_path: '/home', component: 'layout.base$view.home', order: 1 },
    ]);
    assert.deepEqual(
      tree.map((n) => n.name),
      ['home', 'manage'],
    );
    const manage = tree[1];
    assert.equal(manage.component, 'layout.base');
    assert.deepEqual(
      manage.children?.map((c) => c.name),
      ['manage_user', 'manage_user-detail'],
    );
    assert.equal(manage.children?.[0].component, 'view.manage_user');
    assert.equal(manage.children?.[0].meta.localIcon, 'user');
    assert.equal(manage.children?.[1].meta.activeMenu, 'manage_user');
    assert.equal(manage.children?.[1].meta.hideInMenu, true);
    assert.equal(manage.meta.i18nKey, 'route.manage');
  });
});
