import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ADMIN_PASSWORD, startHarness, type Harness } from './support.js';

/**
 * The system-manage answers read the way the Soybean clients of fast-soy-admin read them: the
 * current one (auth trees keyed by `key`, ticked through `resourceId`) and the older one (trees
 * keyed by `id`, grant lists used as ticked keys as they are). The dialogs' confirm sequences are
 * replayed and must leave a role's grants as they were.
 */

type Rec = Record<string, unknown>;
type Page = { records: Rec[]; total: number };
interface TreeNode {
  key: string;
  id: string;
  label: string;
  summary?: string;
  pId?: string | 0;
  isParent: boolean;
  resourceId: string | null;
  routeName?: string;
  meta?: { hidden?: boolean };
  disabled?: boolean;
  children?: TreeNode[];
}
const SM = '/api/v1/system-manage';

const walk = (nodes: TreeNode[], visit: (node: TreeNode) => void): void =>
  nodes.forEach((node) => {
    visit(node);
    walk(node.children ?? [], visit);
  });
const allNodes = (tree: TreeNode[]): TreeNode[] => {
  const list: TreeNode[] = [];
  walk(tree, (n) => list.push(n));
  return list;
};

/** The current client: ticked keys are the leaves whose resourceId the role holds. */
function tickedKeys(resourceIds: string[], tree: TreeNode[]): string[] {
  const held = new Set(resourceIds);
  return allNodes(tree)
    .filter((n) => !n.isParent && n.resourceId && held.has(n.resourceId))
    .map((n) => n.key);
}

/** The current client's confirm: resource ids of the enabled leaves under every ticked key, plus required ids. */
function savedLeafIds(keys: string[], tree: TreeNode[], required: string[] = []): string[] {
  const leafIds = (node: TreeNode): string[] =>
    node.children?.length ? node.children.flatMap(leafIds) : !node.disabled && !node.isParent && node.resourceId ? [node.resourceId] : [];
  const nodes = allNodes(tree);
  const selectable = new Set(nodes.flatMap((n) => (n.children?.length ? [] : leafIds(n))));
  const chosen = keys.flatMap((key) => {
    const node = nodes.find((n) => n.key === key);
    return node ? leafIds(node) : [];
  });
  return [...new Set([...chosen, ...required])].filter((id) => selectable.has(id));
}

function assertAuthTree(tree: TreeNode[], what: string): void {
  assert.ok(Array.isArray(tree) && tree.length > 0, `${what}: a non-empty tree`);
  for (const node of allNodes(tree)) {
    assert.equal(typeof node.key, 'string', `${what}: key`);
    assert.ok(typeof node.label === 'string' && node.label.length > 0 && node.label !== 'undefined', `${what}: label of ${node.key}`);
    assert.equal(typeof node.isParent, 'boolean', `${what}: isParent of ${node.key}`);
    assert.equal(typeof node.id, 'string', `${what}: id of ${node.key} (the older client's key field)`);
    if (node.isParent) assert.equal(node.resourceId, null, `${what}: a parent grants nothing itself (${node.key})`);
    else assert.ok(typeof node.resourceId === 'string' && node.resourceId === node.id, `${what}: a leaf's resourceId is its id (${node.key})`);
  }
  const keys = allNodes(tree).map((n) => n.key);
  assert.equal(new Set(keys).size, keys.length, `${what}: keys are unique`);
}

describe('admin answers as the Soybean clients read them', { timeout: 120_000 }, () => {
  let h: Harness;
  let token: string;
  const call = <T = Rec>(method: string, path: string, body?: unknown, as = token, headers?: Record<string, string>) =>
    h.call<T>(method, SM + path, { token: as, body, headers });
  const roleIdOf = async (code: string) =>
    h.admin.services.ids.encode((await h.sql<{ id: number }>('SELECT id FROM roles WHERE role_code = $1', [code]))[0].id);
  const grantsOf = async (table: string, column: string, code: string) =>
    (await h.sql<{ id: number }>(`SELECT t.${column} AS id FROM ${table} t JOIN roles r ON r.id = t.role_id WHERE r.role_code = $1 ORDER BY 1`, [code])).map(
      (r) => r.id,
    );

  before(async () => {
    h = await startHarness();
    token = (await h.login('admin', ADMIN_PASSWORD)).token;
  });
  after(async () => h?.stop());

  describe('API grants', () => {
    it('the API tree has the fields both clients read', async () => {
      const tree = (await call<TreeNode[]>('GET', '/apis/tree')).data;
      assertAuthTree(tree, 'API tree');
      const users = tree.find((g) => g.key === 'api-tag:users') as TreeNode;
      assert.equal(users.isParent, true);
      const search =
        (users.children ?? []).find((n) => n.label === 'Search users records' || n.summary === 'Search users records') ?? (users.children ?? [])[0];
      assert.equal(typeof search.summary, 'string', 'the older client labels by summary');
      assert.ok((await h.sql('SELECT 1 FROM apis WHERE id = $1', [h.admin.services.ids.decode(search.resourceId)])).length, 'a leaf names a real API');
    });

    it("the current client's confirm, unchanged, keeps every API grant", async () => {
      const before = await grantsOf('role_apis', 'api_id', 'R_ADMIN');
      assert.ok(before.length > 5, 'R_ADMIN starts with API grants');
      const id = await roleIdOf('R_ADMIN');
      const tree = (await call<TreeNode[]>('GET', '/apis/tree')).data;
      const held = (await call<{ byRoleApiIds: string[] }>('GET', `/roles/${id}/apis`)).data.byRoleApiIds;
      const keys = tickedKeys(held, tree);
      assert.equal(keys.length, before.length, 'every grant shows ticked');
      const saved = await call('PATCH', `/roles/${id}/apis`, { byRoleApiIds: savedLeafIds(keys, tree) });
      assert.equal(saved.code, '0000');
      assert.deepEqual(await grantsOf('role_apis', 'api_id', 'R_ADMIN'), before);
      assert.deepEqual(saved.data.removedIds, []);
    });

    it("the older client's confirm (ticked ids, group ids included) keeps every API grant", async () => {
      const before = await grantsOf('role_apis', 'api_id', 'R_ADMIN');
      const id = await roleIdOf('R_ADMIN');
      const tree = (await call<TreeNode[]>('GET', '/apis/tree')).data;
      const held = (await call<{ byRoleApiIds: string[] }>('GET', `/roles/${id}/apis`)).data.byRoleApiIds;
      const byId = new Set(allNodes(tree).map((n) => n.id));
      assert.ok(
        held.every((apiId) => byId.has(apiId)),
        'every held id is a node id, so it shows ticked',
      );
      // A fully ticked tag is ticked too (cascade) and its id travels with the leaves.
      const ticked = [...held, ...tree.filter((g) => (g.children ?? []).every((c) => held.includes(c.id))).map((g) => g.id)];
      assert.equal((await call('PATCH', `/roles/${id}/apis`, { byRoleApiIds: ticked.filter((v) => typeof v === 'string') })).code, '0000');
      assert.deepEqual(await grantsOf('role_apis', 'api_id', 'R_ADMIN'), before);
    });

    it('emptying a role is done only when asked, said plainly, audited, and undoable from the answer', async () => {
      const created = await call('POST', '/roles', { roleName: 'api keeper', roleCode: 'R_KEEPER' });
      const id = created.data.id as string;
      const apis = await h.sql<{ id: number }>(`SELECT id FROM apis WHERE api_path LIKE '/api/v1/system-manage/users%' ORDER BY id LIMIT 3`);
      const apiIds = apis.map((a) => h.admin.services.ids.encode(a.id));
      assert.equal((await call('PATCH', `/roles/${id}/apis`, { byRoleApiIds: apiIds })).code, '0000');
      const emptied = await call<{ byRoleApiIds: string[]; removedIds: string[] }>('PATCH', `/roles/${id}/apis`, { byRoleApiIds: [] });
      assert.equal(emptied.code, '0000');
      assert.match(emptied.msg, /removed every API grant of role R_KEEPER \(3\)/);
      assert.deepEqual(emptied.data.byRoleApiIds, []);
      assert.deepEqual(new Set(emptied.data.removedIds), new Set(apiIds));
      assert.ok(
        h.logs.some((l) => l.action === 'role.grants.emptied' && l.roleCode === 'R_KEEPER' && l.removedCount === 3),
        'audited',
      );
      assert.equal((await call('PATCH', `/roles/${id}/apis`, { byRoleApiIds: emptied.data.removedIds })).code, '0000');
      assert.equal((await grantsOf('role_apis', 'api_id', 'R_KEEPER')).length, 3, 'restored from the answer');
    });

    it('a non-super editor changes only the APIs they can see; the rest of the role stays', async () => {
      await h.createUser('editor1', 'editor-pass', ['R_ADMIN']);
      const editor = (await h.login('editor1', 'editor-pass')).token;
      const target = (await call('POST', '/roles', { roleName: 'mixed', roleCode: 'R_MIXED' })).data.id as string;
      const [outside] = await h.sql<{ id: number }>(
        `SELECT id FROM apis WHERE id NOT IN (SELECT api_id FROM role_apis ra JOIN roles r ON r.id = ra.role_id WHERE r.role_code = 'R_ADMIN') ORDER BY id LIMIT 1`,
      );
      const [inside] = await h.sql<{ id: number }>(
        `SELECT api_id AS id FROM role_apis ra JOIN roles r ON r.id = ra.role_id WHERE r.role_code = 'R_ADMIN' ORDER BY 1 LIMIT 1`,
      );
      const enc = (n: number) => h.admin.services.ids.encode(n);
      assert.equal((await call('PATCH', `/roles/${target}/apis`, { byRoleApiIds: [enc(outside.id), enc(inside.id)] })).code, '0000');
      // The editor's tree shows only what R_ADMIN holds; unticking all of it keeps the hidden grant.
      const tree = (await call<TreeNode[]>('GET', '/apis/tree', undefined, editor)).data;
      assert.ok(!allNodes(tree).some((n) => n.resourceId === enc(outside.id)), 'the outside API is not shown to the editor');
      assert.equal((await call('PATCH', `/roles/${target}/apis`, { byRoleApiIds: [] }, editor)).code, '0000');
      assert.deepEqual(await grantsOf('role_apis', 'api_id', 'R_MIXED'), [outside.id]);
      const escalate = await call('PATCH', `/roles/${target}/apis`, { byRoleApiIds: [enc(outside.id)] }, editor);
      assert.equal(escalate.code, '2201');
      assert.match(escalate.msg, /byRoleApiIds/);
    });
  });

  describe('menu grants and pages', { timeout: 20_000 }, () => {
    it("the menu tree has both clients' fields, no constant page, and ticks what the role holds", async () => {
      const tree = (await call<TreeNode[]>('GET', '/menus/tree?includeHidden=true')).data;
      assertAuthTree(tree, 'menu tree');
      const nodes = allNodes(tree);
      for (const node of nodes) {
        assert.ok(typeof node.routeName === 'string' && node.routeName, `routeName of ${node.key}`);
        assert.equal(typeof node.meta?.hidden, 'boolean', `meta.hidden of ${node.key}`);
        assert.ok(node.pId === 0 || typeof node.pId === 'string', `pId of ${node.key}`);
      }
      for (const constant of ['login', '403', '404', '500']) assert.ok(!nodes.some((n) => n.routeName === constant), `${constant} is not grantable`);
      assert.ok(
        nodes.some((n) => n.routeName === 'manage_user-detail' && n.meta?.hidden === true),
        'hidden pages are grantable',
      );
      assert.ok(
        !allNodes((await call<TreeNode[]>('GET', '/menus/tree?includeHidden=false')).data).some((n) => n.meta?.hidden),
        'includeHidden=false leaves them out',
      );
      assert.equal((await call('GET', '/menus/tree?includeHidden=perhaps')).code, '1200');

      const id = await roleIdOf('R_ADMIN');
      const held = (await call<{ byRoleMenuIds: string[] }>('GET', `/roles/${id}/menus`)).data.byRoleMenuIds;
      const ticked = tickedKeys(held, tree);
      assert.equal(ticked.length, held.length, 'every granted menu shows ticked (current client)');
      const ids = new Set(nodes.map((n) => n.id));
      assert.ok(
        held.every((m) => ids.has(m)),
        'every granted menu shows ticked (older client)',
      );
    });

    it("both clients' confirms, unchanged, keep every menu grant and the home page", async () => {
      const before = await grantsOf('role_menus', 'menu_id', 'R_ADMIN');
      const id = await roleIdOf('R_ADMIN');
      const tree = (await call<TreeNode[]>('GET', '/menus/tree', undefined, token)).data;
      const { byRoleHomeId, byRoleMenuIds } = (await call<{ byRoleHomeId: string; byRoleMenuIds: string[] }>('GET', `/roles/${id}/menus`)).data;
      const current = await call('PATCH', `/roles/${id}/menus`, {
        byRoleHomeId,
        byRoleMenuIds: savedLeafIds(tickedKeys(byRoleMenuIds, tree), tree, [byRoleHomeId]),
      });
      assert.equal(current.code, '0000');
      assert.deepEqual(await grantsOf('role_menus', 'menu_id', 'R_ADMIN'), before);
      assert.equal((await call('PATCH', `/roles/${id}/menus`, { byRoleHomeId, byRoleMenuIds })).code, '0000');
      assert.deepEqual(await grantsOf('role_menus', 'menu_id', 'R_ADMIN'), before);
      // The older client saves a new home page on its own, before the confirm.
      const homeOnly = await call('PATCH', `/roles/${id}/menus`, { byRoleHomeId });
      assert.equal(homeOnly.code, '0000');
      assert.deepEqual(await grantsOf('role_menus', 'menu_id', 'R_ADMIN'), before);
    });

    it('a role always holds its home page, from creation on', async () => {
      const pages = (await call<{ key: string; value: string }[]>('GET', '/menus/pages')).data;
      const about = (await h.sql<{ id: number }>(`SELECT id FROM menus WHERE route_name = 'manage_role'`))[0];
      const homeId = h.admin.services.ids.encode(about.id);
      assert.ok(
        pages.some((p) => p.value === homeId),
        'the page is offered as a home page',
      );
      const created = await call('POST', '/roles', { roleName: 'viewer', roleCode: 'R_VIEWER', byRoleHomeId: homeId });
      assert.equal(created.code, '0000');
      const read = (await call<{ byRoleHomeId: string; byRoleMenuIds: string[] }>('GET', `/roles/${created.data.id as string}/menus`)).data;
      assert.equal(read.byRoleHomeId, homeId);
      assert.ok(read.byRoleMenuIds.includes(homeId), 'the home menu is among the grants');
      const granted = await grantsOf('role_menus', 'menu_id', 'R_VIEWER');
      const [manage] = await h.sql<{ id: number }>(`SELECT id FROM menus WHERE route_name = 'manage'`);
      assert.deepEqual(new Set(granted), new Set([about.id, manage.id]), 'with its catalog, so the route delivery can show it');
      const emptied = await call<{ byRoleMenuIds: string[] }>('PATCH', `/roles/${created.data.id as string}/menus`, { byRoleMenuIds: [] });
      assert.ok(emptied.data.byRoleMenuIds.includes(homeId), 'unticking everything still leaves the home page');
    });

    it('pages are {key: menuName, value: id} of grantable pages', async () => {
      const pages = (await call<{ key: string; value: string }[]>('GET', '/menus/pages')).data;
      assert.ok(pages.length >= 5, 'the seeded pages are listed');
      const menus = await h.sql<{ id: number; menu_name: string; constant: boolean; menu_type: string }>(
        'SELECT id, menu_name, constant, menu_type FROM menus',
      );
      for (const page of pages) {
        const menu = menus.find((m) => h.admin.services.ids.encode(m.id) === page.value);
        assert.ok(menu, `value ${page.value} is a menu id`);
        assert.equal(page.key, menu.menu_name);
        assert.equal(menu.constant, false, `${page.key} is not a constant page`);
        assert.equal(menu.menu_type, '2', `${page.key} is a page, not a catalog`);
      }
    });
  });

  describe('records and write answers', () => {
    it('root menus have parentId null; the list honours includeConstant and includeHidden', async () => {
      const all = (await call<Page>('POST', '/menus/search', { size: 100 })).data.records;
      const home = all.find((m) => m.routeName === 'home') as Rec;
      assert.equal(home.parentId, null);
      assert.equal((await call('GET', `/menus/${home.id as string}`)).data.parentId, null);
      assert.ok(all.some((m) => m.constant === true) && all.some((m) => m.hideInMenu === true), 'no toggles: every menu');
      const plain = await call<Page>('POST', '/menus/search', { size: 100, includeConstant: false, includeHidden: false, includeBusiness: false });
      assert.equal(plain.code, '0000');
      assert.ok(
        plain.data.records.length > 0 && plain.data.records.every((m) => m.constant === false && m.hideInMenu === false),
        'toggles off: neither constant nor hidden menus',
      );
      const constants = (await call<Page>('POST', '/menus/search', { size: 100, includeConstant: true, includeHidden: false })).data.records;
      assert.ok(
        constants.some((m) => m.routeName === 'login') && !constants.some((m) => m.hideInMenu === true && m.constant === false),
        'includeConstant alone: constant pages, no other hidden menu',
      );
      const hidden = (await call<Page>('POST', '/menus/search', { size: 100, includeConstant: false, includeHidden: true })).data.records;
      assert.ok(
        hidden.some((m) => m.routeName === 'manage_user-detail') && !hidden.some((m) => m.constant === true),
        'includeHidden alone: hidden menus, no constant page',
      );
    });

    it('writes answer with the record and createdId/updatedId; createdBy/updatedBy name the acting user', async () => {
      const created = await call('POST', '/roles', { roleName: 'named', roleCode: 'R_NAMED' });
      assert.equal(created.code, '0000');
      assert.equal(created.data.createdId, created.data.id);
      assert.equal(created.data.roleCode, 'R_NAMED');
      assert.equal(created.data.createdBy, 'admin');
      await h.createUser('second', 'second-pass', ['R_SUPER']);
      const second = (await h.login('second', 'second-pass')).token;
      const updated = await call('PATCH', `/roles/${created.data.id as string}`, { roleDesc: 'changed' }, second);
      assert.equal(updated.data.updatedId, created.data.id);
      assert.equal(updated.data.roleDesc, 'changed');
      assert.equal(updated.data.updatedBy, 'second');
      assert.equal(updated.data.createdBy, 'admin');
      const listed = (await call<Page>('POST', '/roles/search', { roleCode: 'R_NAMED' })).data.records[0];
      assert.equal(listed.createdBy, 'admin');
      assert.equal(listed.updatedBy, 'second');
      const user = await call('POST', '/users', { userName: 'carol', password: 'carol-pass', byUserRoleCodeList: ['R_USER'] });
      assert.equal(user.data.createdBy, 'admin');
      assert.equal(user.data.createdId, user.data.id);
    });

    it('health answers on /health as well as /healthz', async () => {
      for (const path of ['/health', '/healthz']) {
        const response = await fetch(h.url + path);
        assert.equal(response.status, 200, path);
        assert.deepEqual(await response.json(), { status: 'ok' });
      }
    });
  });

  describe("messages in the reader's language", () => {
    it('answers in Chinese for zh-CN and in English otherwise', async () => {
      const zh = { 'accept-language': 'zh-CN,zh;q=0.9,en;q=0.8' };
      const wrong = (headers?: Record<string, string>) =>
        h.call('POST', '/api/v1/auth/login', { body: { userName: 'admin', password: 'wrong-password' }, headers });
      assert.equal((await wrong(zh)).msg, '用户名或密码错误');
      assert.equal((await wrong({ 'accept-language': 'en-US,en;q=0.9' })).msg, 'wrong user name or password');
      assert.equal((await wrong()).msg, 'wrong user name or password');
      const created = await call('POST', '/dictionaries', { dictType: 'lang_test', label: 'a', value: 'a' }, token, zh);
      assert.equal(created.code, '0000');
      assert.equal(created.msg, '创建成功');
      const invalid = await call('POST', '/users', { password: 'x-pass-1' }, token, zh);
      assert.equal(invalid.code, '1200');
      assert.match(invalid.msg, /^请求参数错误: .*userName/, 'the field stays named');
      const missing = await h.call('GET', `${SM}/nothing-here`, { token, headers: zh });
      assert.match(missing.msg, /^路由不存在/);
      assert.equal((await h.call('GET', '/api/v1/auth/user-info', { headers: zh })).msg, '认证失败，请求中不存在令牌');
    });

    it("follows the language the UI names (X-Lang) over the browser's, which stays the fallback", async () => {
      // Another user than the test above, whose failed logins count toward the same lock.
      const wrong = (headers: Record<string, string>) =>
        h.call('POST', '/api/v1/auth/login', { body: { userName: 'lang-probe', password: 'wrong-password' }, headers });
      // A Chinese browser with the UI switched to English, and the other way round.
      assert.equal((await wrong({ 'accept-language': 'zh-CN,zh;q=0.9', 'x-lang': 'en-US' })).msg, 'wrong user name or password');
      assert.equal((await wrong({ 'accept-language': 'en-US,en;q=0.9', 'x-lang': 'zh-CN' })).msg, '用户名或密码错误');
      assert.equal(
        (await wrong({ 'accept-language': 'zh-CN', 'x-lang': 'fr-FR' })).msg,
        '用户名或密码错误',
        "a UI language without messages falls back to the browser's",
      );
      const missing = await h.call('GET', `${SM}/nothing-here`, { token, headers: { 'accept-language': 'en', 'x-lang': 'zh-CN' } });
      assert.match(missing.msg, /^路由不存在/);
    });
  });
});
