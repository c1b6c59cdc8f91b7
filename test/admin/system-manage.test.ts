import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ADMIN_PASSWORD, startHarness, type Harness } from './support.js';

type Rec = Record<string, unknown>;
type Page = { records: Rec[]; total: number; current: number; size: number };
const SM = '/api/v1/system-manage';

describe('admin system-manage resources', () => {
  let h: Harness;
  let token: string;
  const call = <T = Rec>(method: string, path: string, body?: unknown, as = token) => h.call<T>(method, SM + path, { token: as, body });

  before(async () => {
    h = await startHarness();
    token = (await h.login('admin', ADMIN_PASSWORD)).token;
  });
  after(async () => h?.stop());

  describe('envelope and input errors', () => {
    it('bad JSON, malformed ids, oversize pages and unknown fields give envelope errors, never a 500', async () => {
      const badJson = await h.call('POST', `${SM}/users/search`, { token, raw: '{"current": ' });
      assert.equal(badJson.status, 200);
      assert.equal(badJson.code, '1200');
      for (const id of ['1', '0', 'not-a-valid-id!', 'a'.repeat(40)]) {
        const reply = await call('GET', `/users/${encodeURIComponent(id)}`);
        assert.equal(reply.code, '1200', `id ${id}`);
        assert.equal(reply.status, 200);
      }
      assert.equal((await call('POST', '/users/search', { size: 1001 })).code, '1200');
      assert.equal((await call('POST', '/users/search', { size: 0 })).code, '1200');
      assert.equal((await call('POST', '/users/search', { current: 0 })).code, '1200');
      assert.match((await call('POST', '/users/search', { orderBy: ['password'] })).msg, /orderBy/);
      assert.equal((await call('POST', '/users/search', { orderBy: ['id; DROP TABLE users'] })).code, '1200');
      const missing = await call('POST', '/users', { password: 'pass-123' });
      assert.equal(missing.code, '1200');
      assert.match(missing.msg, /userName/, 'the message names the field');
      const unknownRoute = await h.call('GET', `${SM}/nothing-here`, { token });
      assert.equal(unknownRoute.status, 404);
      assert.equal(unknownRoute.code, '1101');
    });

    it('ids of another secret do not decode', async () => {
      const { createIdCodec } = await import('../../admin/resources/ids.js');
      const foreign = createIdCodec('some-other-secret-key-value').encode(1);
      assert.equal((await call('GET', `/users/${foreign}`)).code, '1200');
    });
  });

  describe('users', () => {
    let userId: string;

    it('creates with a hashed password and linked roles (snake_case accepted), output camelCase with sqid ids', async () => {
      const reply = await call('POST', '/users', {
        user_name: 'alice',
        password: 'alice-pass',
        nick_name: 'Alice',
        user_email: 'alice@example.com',
        by_user_role_code_list: ['R_USER'],
      });
      assert.equal(reply.code, '0000');
      userId = reply.data.id as string;
      assert.match(userId, /^[A-Za-z0-9]{8,}$/);
      assert.equal(reply.data.nickName, 'Alice');
      assert.equal(reply.data.password, undefined, 'password never leaves the server');
      assert.deepEqual(reply.data.byUserRoleCodeList, ['R_USER']);
      for (const key of Object.keys(reply.data)) assert.doesNotMatch(key, /_/, `camelCase key ${key}`);
      const [row] = await h.sql<{ password: string }>(`SELECT password FROM users WHERE user_name = 'alice'`);
      assert.match(row.password, /^\$argon2id\$/);
      assert.equal((await h.call('POST', '/api/v1/auth/login', { body: { userName: 'alice', password: 'alice-pass' } })).code, '0000');
    });

    it('reports duplicates with their codes and unknown role codes clearly', async () => {
      assert.equal((await call('POST', '/users', { userName: 'alice', password: 'x-pass-1' })).code, '2304');
      assert.equal((await call('POST', '/users', { userName: 'alice2', password: 'x-pass-1', userEmail: 'alice@example.com' })).code, '2302');
      const unknown = await call('POST', '/users', { userName: 'bob', password: 'x-pass-1', byUserRoleCodeList: ['R_NOPE'] });
      assert.equal(unknown.code, '1200');
      assert.match(unknown.msg, /R_NOPE/);
      assert.equal((await h.sql(`SELECT 1 FROM users WHERE user_name = 'bob'`)).length, 0, 'the failed create left nothing behind');
    });

    it('gets, updates and searches with filters, paging and orderBy', async () => {
      const got = await call('GET', `/users/${userId}`);
      assert.equal(got.data.userName, 'alice');
      const updated = await call('PATCH', `/users/${userId}`, { nickName: 'Alice B', byUserRoleCodeList: ['R_USER', 'R_ADMIN'] });
      assert.equal(updated.data.nickName, 'Alice B');
      assert.deepEqual(new Set(updated.data.byUserRoleCodeList as string[]), new Set(['R_USER', 'R_ADMIN']));
      for (let i = 0; i < 12; i++) await call('POST', '/users', { userName: `bulk${String(i).padStart(2, '0')}`, password: 'bulk-pass' });
      const page2 = await call<Page>('POST', '/users/search', { userName: 'bulk', current: 2, size: 5, orderBy: ['-userName'] });
      assert.equal(page2.data.total, 12);
      assert.equal(page2.data.current, 2);
      assert.equal(page2.data.size, 5);
      assert.deepEqual(
        page2.data.records.map((r) => r.userName),
        ['bulk06', 'bulk05', 'bulk04', 'bulk03', 'bulk02'],
      );
      const defaults = await call<Page>('POST', '/users/search', {});
      assert.equal(defaults.data.current, 1);
      assert.equal(defaults.data.size, 10);
      assert.equal(defaults.data.records.length, 10);
      const beyond = await call<Page>('POST', '/users/search', { userName: 'bulk', current: 99, size: 5 });
      assert.equal(beyond.data.records.length, 0);
      assert.equal(beyond.data.total, 12);
      const byRole = await call<Page>('POST', '/users/search', { byUserRoleCodeList: ['R_ADMIN'] });
      assert.deepEqual(
        byRole.data.records.map((r) => r.userName),
        ['alice'],
      );
      const like = await call<Page>('POST', '/users/search', { userName: '%' });
      assert.equal(like.data.total, 0, 'LIKE wildcards in filters are literal');
    });

    it('deletes one and many', async () => {
      const victims = await call<Page>('POST', '/users/search', { userName: 'bulk', size: 3 });
      const ids = victims.data.records.map((r) => r.id as string);
      assert.deepEqual((await call('DELETE', `/users/${ids[0]}`)).data, { deletedId: ids[0] });
      const batch = await call<{ deletedCount: number }>('DELETE', '/users', { ids: ids.slice(1) });
      assert.equal(batch.data.deletedCount, 2);
      assert.equal((await call('GET', `/users/${ids[0]}`)).code, '1101');
      assert.equal((await call('DELETE', '/users', { ids: [] })).code, '1200');
    });
  });

  describe('roles', () => {
    it('standard routes, duplicate code 2301, menu grants with ancestors and leaf read-back, buttons and APIs', async () => {
      const [home] = await h.sql<{ id: number }>(`SELECT id FROM menus WHERE route_name = 'home'`);
      const homeId = h.admin.services.ids.encode(home.id);
      const created = await call('POST', '/roles', { roleName: 'auditor', roleCode: 'R_AUDITOR', roleDesc: 'reads', byRoleHomeId: homeId });
      assert.equal(created.code, '0000');
      assert.equal(created.data.byRoleHomeId, homeId);
      assert.equal((await call('POST', '/roles', { roleName: 'auditor 2', roleCode: 'R_AUDITOR' })).code, '2301');
      const id = created.data.id as string;
      const menus = await h.sql<{ id: number; route_name: string }>(`SELECT id, route_name FROM menus WHERE route_name IN ('manage', 'manage_user', 'home')`);
      const menuId = (name: string) => h.admin.services.ids.encode(menus.find((m) => m.route_name === name)?.id as number);
      const patched = await call<{ byRoleMenuIds: string[] }>('PATCH', `/roles/${id}/menus`, {
        byRoleHomeId: homeId,
        byRoleMenuIds: [menuId('manage_user'), menuId('home')],
      });
      assert.equal(patched.code, '0000');
      assert.ok(patched.data.byRoleMenuIds.includes(menuId('manage')), 'the catalog ancestor is granted too');
      const read = await call<{ byRoleMenuIds: string[]; byRoleHomeId: string }>('GET', `/roles/${id}/menus`);
      assert.deepEqual(new Set(read.data.byRoleMenuIds), new Set([menuId('manage_user'), menuId('home')]), 'leaves only');
      assert.equal(read.data.byRoleHomeId, homeId);
      const [api] = await h.sql<{ id: number }>(`SELECT id FROM apis WHERE api_method = 'post' AND api_path = '/api/v1/system-manage/users/search'`);
      const [button] = await h.sql<{ id: number }>(`SELECT id FROM buttons WHERE button_code = 'B_SYSTEM_USER_CREATE'`);
      assert.equal((await call('PATCH', `/roles/${id}/apis`, { byRoleApiIds: [h.admin.services.ids.encode(api.id)] })).code, '0000');
      assert.equal((await call('PATCH', `/roles/${id}/buttons`, { by_role_button_ids: [h.admin.services.ids.encode(button.id)] })).code, '0000');
      assert.deepEqual((await call('GET', `/roles/${id}/apis`)).data, { byRoleApiIds: [h.admin.services.ids.encode(api.id)] });
      assert.deepEqual((await call('GET', `/roles/${id}/buttons`)).data, { byRoleButtonIds: [h.admin.services.ids.encode(button.id)] });

      // The grants take effect at once: a user of the role can search users but not create them.
      await h.createUser('auditor1', 'pass-123', ['R_AUDITOR']);
      const auditor = (await h.login('auditor1', 'pass-123')).token;
      assert.equal((await call('POST', '/users/search', {}, auditor)).code, '0000');
      assert.equal(
        (await call('GET', '/roles/search', undefined, auditor)).code,
        '2201',
        'GET /roles/search matches the /roles/{id} template, which is not granted',
      );
      assert.equal((await call('POST', '/roles/search', {}, auditor)).code, '2201');
      const routes = await h.call<{ home: string; routes: Rec[] }>('GET', '/api/v1/route/user-routes', { token: auditor });
      assert.equal(routes.data.home, 'home');
      assert.deepEqual(routes.data.routes.map((r) => r.name).sort(), ['home', 'manage']);
      const manage = routes.data.routes.find((r) => r.name === 'manage') as { children: Rec[] };
      assert.deepEqual(
        manage.children.map((c) => c.name),
        ['manage_user'],
      );
      const info = await h.call<{ buttons: string[] }>('GET', '/api/v1/auth/user-info', { token: auditor });
      assert.deepEqual(info.data.buttons, ['B_SYSTEM_USER_CREATE']);

      const search = await call<Page>('POST', '/roles/search', { roleCode: 'AUDIT' });
      assert.deepEqual(
        search.data.records.map((r) => r.roleCode),
        ['R_AUDITOR'],
      );
      assert.equal((await call('DELETE', `/roles/${id}`)).code, '0000');
      const after = await h.call('GET', '/api/v1/auth/user-info', { token: auditor });
      assert.equal(after.code, '0000');
      assert.equal((await call('POST', '/users/search', {}, auditor)).code, '2207', 'deleting the role removed the grants');
    });
  });

  describe('menus', () => {
    it('standard routes, tree, pages, buttons kept on the menu, duplicate path 2305', async () => {
      const [manage] = await h.sql<{ id: number }>(`SELECT id FROM menus WHERE route_name = 'manage'`);
      const parentId = h.admin.services.ids.encode(manage.id);
      const created = await call('POST', '/menus', {
        menuName: 'cluster manage',
        routeName: 'manage_cluster',
        routePath: '/manage/cluster',
        component: 'view.manage_cluster',
        parentId,
        order: 7,
        byMenuButtons: [{ buttonCode: 'B_CLUSTER_CREATE', buttonDesc: 'create cluster' }],
      });
      assert.equal(created.code, '0000');
      assert.equal(created.data.parentId, parentId);
      assert.deepEqual(
        (created.data.buttons as Rec[]).map((b) => b.buttonCode),
        ['B_CLUSTER_CREATE'],
      );
      assert.equal((await call('POST', '/menus', { menuName: 'dup', routeName: 'dup_route', routePath: '/manage/cluster' })).code, '2305');
      const tree = await call<Rec[]>('GET', '/menus/tree');
      const manageNode = tree.data.find((n) => n.routeName === 'manage') as { children: Rec[] };
      assert.ok(manageNode.children.some((c) => c.routeName === 'manage_cluster'));
      const buttonTree = await call<{ label: string; children: { label: string; children?: { kind: string; label: string }[] }[] }[]>(
        'GET',
        '/menus/buttons/tree',
      );
      const manageButtons = buttonTree.data.find((n) => n.label === 'system manage');
      const clusterNode = manageButtons?.children.find((c) => c.label === 'cluster manage');
      assert.deepEqual(
        clusterNode?.children?.map((b) => b.kind),
        ['button'],
        'buttons hang under their menu',
      );
      assert.ok(
        buttonTree.data.some((n) => n.label === 'other buttons'),
        'buttons without a menu are grouped',
      );
      const pages = await call<{ key: string; value: string; routeName: string }[]>('GET', '/menus/pages');
      assert.ok(pages.data.some((p) => p.routeName === 'manage_cluster' && p.value === created.data.id) && pages.data.some((p) => p.routeName === 'home'));
      const updated = await call('PATCH', `/menus/${created.data.id as string}`, { hide_in_menu: true, byMenuButtons: [] });
      assert.equal(updated.data.hideInMenu, true);
      assert.deepEqual(updated.data.buttons, []);
      const search = await call<Page>('POST', '/menus/search', { routeName: 'manage_', orderBy: ['-order'], size: 3 });
      assert.equal(search.data.records.length, 3);
      const orders = search.data.records.map((r) => r.order as number);
      assert.deepEqual(
        orders,
        [...orders].sort((a, b) => b - a),
      );
      assert.equal((await call('DELETE', `/menus/${created.data.id as string}`)).code, '0000');
    });

    it("the menu form's activeMenu is kept, by route name, name or id, and read back", async () => {
      const [user, role] = await h.sql<{ id: number }>(
        `SELECT id FROM menus WHERE route_name IN ('manage_user', 'manage_role') ORDER BY route_name = 'manage_role'`,
      );
      const enc = (id: number) => h.admin.services.ids.encode(id);
      const created = await call('POST', '/menus', {
        menuName: 'detail page',
        routeName: 'manage_detail-x',
        routePath: '/manage/detail-x',
        component: 'view.manage_detail-x',
        hideInMenu: true,
        activeMenu: 'manage_user',
      });
      assert.equal(created.code, '0000', created.msg);
      assert.equal(created.data.activeMenuId, enc(user.id), 'the route name the older client sends');
      assert.equal(created.data.activeMenu, 'manage_user', 'read back as the form has it');
      const id = created.data.id as string;
      const [roleMenu] = await h.sql<{ menu_name: string }>('SELECT menu_name FROM menus WHERE id = $1', [role.id]);
      assert.equal((await call('PATCH', `/menus/${id}`, { activeMenu: roleMenu.menu_name })).data.activeMenuId, enc(role.id), 'a menu name (fast-soy-admin)');
      assert.equal((await call('PATCH', `/menus/${id}`, { activeMenu: enc(user.id) })).data.activeMenu, 'manage_user', 'a public id');
      assert.equal(
        (await call('PATCH', `/menus/${id}`, { activeMenuId: enc(role.id), activeMenu: 'manage_user' })).data.activeMenu,
        'manage_role',
        'activeMenuId wins',
      );
      assert.equal((await call('PATCH', `/menus/${id}`, { menuName: 'detail page 2' })).data.activeMenu, 'manage_role', 'absent: unchanged');
      const unknown = await call('PATCH', `/menus/${id}`, { activeMenu: 'no_such_menu' });
      assert.equal(unknown.code, '1200');
      assert.match(unknown.msg, /activeMenu: no menu/);
      const routes = await h.call<{ routes: { name: string; meta: Rec }[] }>('GET', '/api/v1/route/user-routes', { token });
      const detail = routes.data.routes.find((r) => r.name === 'manage_detail-x');
      assert.equal(detail?.meta.activeMenu, 'manage_role');
      const cleared = await call('PATCH', `/menus/${id}`, { activeMenu: null });
      assert.equal(cleared.data.activeMenuId, null);
      assert.equal(cleared.data.activeMenu, null);
      assert.equal((await call('DELETE', `/menus/${id}`)).code, '0000');
    });

    it('constant routes are public and come from the cache after the first call', async () => {
      const reply = await h.call<Rec[]>('GET', '/api/v1/route/constant-routes');
      assert.deepEqual(reply.data.map((r) => r.name).sort(), ['403', '404', '500', 'login']);
      assert.ok(await h.admin.services.kv.redis.get('constant_routes'), 'cached in redis');
      assert.equal((await h.call<boolean>('GET', '/api/v1/route/exists?name=manage_user', { token })).data, true);
      assert.equal((await h.call<boolean>('GET', '/api/v1/route/exists?name=nope', { token })).data, false);
    });
  });

  describe('apis', () => {
    it('is read-only: search, get, tree, tags; no create', async () => {
      const search = await call<Page>('POST', '/apis/search', { apiPath: '/system-manage/users', apiMethod: 'post', size: 100 });
      assert.ok(search.data.records.some((r) => r.apiPath === '/api/v1/system-manage/users/search'));
      const one = search.data.records[0];
      assert.equal((await call('GET', `/apis/${one.id as string}`)).data.apiPath, one.apiPath);
      assert.equal((await call('POST', '/apis', { apiPath: '/x' })).status, 404);
      const tags = await call<string[]>('GET', '/apis/tags');
      assert.ok(tags.data.includes('users') && tags.data.includes('auth'));
      const tree = await call<Rec[]>('GET', '/apis/tree');
      assert.ok(tree.data.some((g) => g.key === 'api-tag:users'));
      const byTag = await call<Page>('POST', '/apis/search', { tags: ['dictionaries'], size: 100 });
      assert.ok(byTag.data.total > 0 && byTag.data.records.every((r) => (r.tags as string[]).includes('dictionaries')));
    });

    it('an administrator can disable an API for everybody (2200) and enable it again', async () => {
      await h.createUser('status1', 'pass-123', ['R_ADMIN']);
      const t = (await h.login('status1', 'pass-123')).token;
      const [api] = await h.sql<{ id: number }>(`SELECT id FROM apis WHERE api_method = 'post' AND api_path = '/api/v1/system-manage/users/search'`);
      const id = h.admin.services.ids.encode(api.id);
      assert.equal((await call('PATCH', `/apis/${id}/status`, { statusType: 'disable' })).code, '0000');
      assert.equal((await call('POST', '/users/search', {}, t)).code, '2200');
      assert.equal((await call('POST', '/users/search', {})).code, '0000', 'R_SUPER still passes');
      assert.equal((await call('PATCH', `/apis/${id}/status`, { status_type: '1' })).code, '0000');
      assert.equal((await call('POST', '/users/search', {}, t)).code, '0000');
      assert.equal((await call('PATCH', `/apis/${id}/status`, { statusType: 'maybe' })).code, '1200');
    });

    it('non-super users see only the APIs their roles grant', async () => {
      await h.createUser('admin2', 'pass-123', ['R_ADMIN']);
      const t = (await h.login('admin2', 'pass-123')).token;
      const all = await call<Page>('POST', '/apis/search', { size: 1000 });
      const mine = await call<Page>('POST', '/apis/search', { size: 1000 }, t);
      assert.equal(mine.code, '0000');
      assert.ok(mine.data.total < all.data.total);
      assert.ok(mine.data.records.every((r) => (r.apiPath as string).startsWith('/api/v1/system-manage/')));
    });
  });

  describe('dictionaries', () => {
    it('standard routes with soft delete and cached options invalidated on write', async () => {
      const created = await call('POST', '/dictionaries', { dict_type: 'db_engine', label: 'PostgreSQL 15', value: 'pg15', order: 2 });
      assert.equal(created.code, '0000');
      await call('POST', '/dictionaries', { dictType: 'db_engine', label: 'PostgreSQL 16', value: 'pg16', order: 1 });
      assert.equal((await call('POST', '/dictionaries', { dictType: 'db_engine', label: 'again', value: 'pg16' })).code, '2300');
      const options = await call<{ label: string; value: string }[]>('GET', '/dictionaries/db_engine/options');
      assert.deepEqual(options.data, [
        { label: 'PostgreSQL 16', value: 'pg16' },
        { label: 'PostgreSQL 15', value: 'pg15' },
      ]);
      const ttl = await h.admin.services.kv.redis.ttl('dict_options:db_engine');
      assert.ok(ttl > 290 && ttl <= 300, `cached for 5 minutes (ttl ${ttl})`);
      await call('PATCH', `/dictionaries/${created.data.id as string}`, { status: '2' });
      assert.deepEqual(
        (await call<{ value: string }[]>('GET', '/dictionaries/db_engine/options')).data.map((o) => o.value),
        ['pg16'],
        'a write clears the cache',
      );
      assert.equal((await call('DELETE', `/dictionaries/${created.data.id as string}`)).code, '0000');
      assert.equal((await call('GET', `/dictionaries/${created.data.id as string}`)).code, '1101');
      assert.equal((await h.sql(`SELECT 1 FROM dictionaries WHERE value = 'pg15' AND deleted_at IS NOT NULL`)).length, 1, 'soft-deleted row is kept');
      assert.equal(
        (await call('POST', '/dictionaries', { dictType: 'db_engine', label: 'back', value: 'pg15' })).code,
        '0000',
        'a soft-deleted value can be created again',
      );
      const search = await call<Page>('POST', '/dictionaries/search', { dictType: 'db_engine', orderBy: ['order'] });
      assert.deepEqual(
        search.data.records.map((r) => r.value),
        ['pg15', 'pg16'],
      );
      assert.equal((await call('GET', '/dictionaries/bad%20type/options')).code, '1200');
      const moved = search.data.records[0];
      assert.equal((await call<unknown[]>('GET', '/dictionaries/db_engine/options')).data.length, 2);
      await call('PATCH', `/dictionaries/${moved.id as string}`, { dictType: 'db_engine_old' });
      assert.equal((await call<unknown[]>('GET', '/dictionaries/db_engine/options')).data.length, 1, 'moving an entry clears the old type too');
    });
  });

  describe('six standard routes on every writable resource', () => {
    const samples: Record<string, (i: number) => Rec> = {
      '/roles': (i) => ({ roleName: `six role ${i}`, roleCode: `R_SIX_${i}` }),
      '/menus': (i) => ({ menuName: `six ${i}`, routeName: `six_${i}`, routePath: `/six/${i}`, component: 'view.home' }),
      '/dictionaries': (i) => ({ dictType: 'six', label: `six ${i}`, value: `v${i}` }),
      '/users': (i) => ({ userName: `six${i}`, password: 'six-pass-1' }),
    };
    for (const [path, sample] of Object.entries(samples)) {
      it(`${path}: create, get, update, search, delete, batch delete`, async () => {
        const a = await call('POST', path, sample(1));
        const b = await call('POST', path, sample(2));
        const c = await call('POST', path, sample(3));
        for (const r of [a, b, c]) assert.equal(r.code, '0000', r.msg);
        const got = await call('GET', `${path}/${a.data.id as string}`);
        assert.equal(got.data.id, a.data.id);
        assert.equal((await call('PATCH', `${path}/${a.data.id as string}`, {})).code, '0000', 'an empty update is allowed');
        const page = await call<Page>('POST', `${path}/search`, { size: 1000 });
        for (const r of [a, b, c])
          assert.ok(
            page.data.records.some((x) => x.id === r.data.id),
            `search finds ${r.data.id as string}`,
          );
        assert.equal((await call('DELETE', `${path}/${a.data.id as string}`)).code, '0000');
        const batch = await call<{ deletedCount: number }>('DELETE', path, { ids: [b.data.id, c.data.id, a.data.id] });
        assert.equal(batch.data.deletedCount, 2, 'already deleted ids are not counted again');
        assert.equal((await call('GET', `${path}/${b.data.id as string}`)).code, '1101');
      });
    }
  });

  describe('guard rails', () => {
    it('R_SUPER cannot be deleted, renamed or disabled; nobody deletes their own account; parents keep their children', async () => {
      const [superRole] = await h.sql<{ id: number }>(`SELECT id FROM roles WHERE role_code = 'R_SUPER'`);
      const superId = h.admin.services.ids.encode(superRole.id);
      assert.equal((await call('DELETE', `/roles/${superId}`)).code, '2400');
      assert.equal((await call('DELETE', '/roles', { ids: [superId] })).code, '2400');
      assert.equal((await call('PATCH', `/roles/${superId}`, { statusType: '2' })).code, '2400');
      assert.equal((await call('PATCH', `/roles/${superId}`, { roleCode: 'R_OTHER' })).code, '2400');
      assert.equal((await call('PATCH', `/roles/${superId}`, { roleDesc: 'still allowed' })).code, '0000');
      const [me] = await h.sql<{ id: number }>(`SELECT id FROM users WHERE user_name = 'admin'`);
      assert.equal((await call('DELETE', `/users/${h.admin.services.ids.encode(me.id)}`)).code, '2400');
      const [manage] = await h.sql<{ id: number }>(`SELECT id FROM menus WHERE route_name = 'manage'`);
      const refused = await call('DELETE', `/menus/${h.admin.services.ids.encode(manage.id)}`);
      assert.equal(refused.code, '2400');
      assert.match(refused.msg, /manage_user/);
    });
  });

  describe('request monitoring', () => {
    it('collects API requests by template and code but never authentication requests', async () => {
      const text = await (await fetch(`${h.url}/metrics`)).text();
      assert.match(text, /admin_http_requests_total\{method="post",route="\/api\/v1\/system-manage\/users\/search",code="0000"\} \d+/);
      assert.match(text, /route="\/api\/v1\/system-manage\/users\/\{id\}",code="1200"/, 'failures are counted by envelope code');
      assert.doesNotMatch(text, /\/api\/v1\/auth\//, 'login, refresh and user-info are not collected');
    });
  });

  describe('seeded roles', () => {
    it('R_ADMIN manages users through its seeded grants and buttons; R_USER is denied', async () => {
      await h.createUser('admin3', 'pass-123', ['R_ADMIN']);
      await h.createUser('plain1', 'pass-123', ['R_USER']);
      const a = (await h.login('admin3', 'pass-123')).token;
      const u = (await h.login('plain1', 'pass-123')).token;
      assert.equal((await call('POST', '/users/search', {}, a)).code, '0000');
      assert.equal((await call('POST', '/users', { userName: 'made-by-admin', password: 'pass-123' }, a)).code, '0000');
      assert.equal((await call('POST', '/users/search', {}, u)).code, '2201');
      const routes = await h.call<{ routes: Rec[] }>('GET', '/api/v1/route/user-routes', { token: u });
      assert.deepEqual(
        routes.data.routes.map((r) => r.name),
        ['home', 'user-center'],
        'R_USER sees the home page and its own user center',
      );
    });
  });
});
