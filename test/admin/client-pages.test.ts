/**
 * The clusters page without its view in the front end (CLUSTERS_PAGE unset, the default): a stock
 * Soybean client would show its menu as the raw key `route.business`, a dead entry and console
 * errors, and its role dialog, unable to show the page, would drop the page's grant on save. So
 * nothing is seeded, a page seeded by an earlier version is neither delivered nor offered, and
 * role-menu saves from either client keep its grants.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ADMIN_PASSWORD, startHarness, type Harness } from './support.js';

type Rec = Record<string, unknown>;
interface TreeNode {
  key: string;
  id: string;
  label: string;
  isParent: boolean;
  resourceId: string | null;
  routeName?: string;
  buttonCode?: string;
  children?: TreeNode[];
}
interface RouteNode {
  name: string;
  children?: RouteNode[];
}
const flat = <T extends { children?: T[] }>(nodes: T[]): T[] => nodes.flatMap((n) => [n, ...flat(n.children ?? [])]);
const PAGE = 'business_database-clusters';

describe('admin without the clusters page in the front end', () => {
  let h: Harness;
  let token: string;
  const call = <T = Rec>(method: string, path: string, body?: unknown, as = token) => h.call<T>(method, `/api/v1${path}`, { token: as, body });
  const roleMenus = async (code: string) =>
    (
      await h.sql<{ route_name: string }>(
        `SELECT m.route_name FROM role_menus rm JOIN roles r ON r.id = rm.role_id JOIN menus m ON m.id = rm.menu_id WHERE r.role_code = $1 ORDER BY 1`,
        [code],
      )
    ).map((r) => r.route_name);

  before(async () => {
    h = await startHarness();
    token = (await h.login('admin', ADMIN_PASSWORD)).token;
  });
  after(async () => h?.stop());

  it('seeds no clusters menu, only the button codes (for clients and API users that have the page)', async () => {
    assert.deepEqual(await h.sql(`SELECT route_name FROM menus WHERE route_name IN ('business', $1)`, [PAGE]), []);
    const routes = await call<{ routes: RouteNode[] }>('GET', '/route/user-routes');
    assert.ok(!flat(routes.data.routes).some((r) => r.name === 'business' || r.name === PAGE), 'R_SUPER gets no dead entry');
    const buttons = await call<TreeNode[]>('GET', '/system-manage/menus/buttons/tree');
    const other = buttons.data.find((n) => n.label === 'other buttons');
    assert.deepEqual(
      other?.children
        ?.map((b) => b.buttonCode)
        .filter((c) => c?.startsWith('B_DBC_'))
        .sort(),
      ['B_DBC_CLUSTER_CREATE', 'B_DBC_CLUSTER_DELETE', 'B_DBC_CLUSTER_UPDATE'],
    );
  });

  describe('a page seeded by an earlier version', () => {
    let roleId: string;
    before(async () => {
      await h.sql(
        `INSERT INTO menus (menu_name, menu_type, route_name, route_path, parent_id, component, "order") VALUES ('business', '1', 'business', '/business', 0, 'layout.base', 5)`,
      );
      await h.sql(
        `INSERT INTO menus (menu_name, menu_type, route_name, route_path, parent_id, component, "order") SELECT 'database clusters', '2', $1, '/business/database-clusters', id, 'view.business_database-clusters', 1 FROM menus WHERE route_name = 'business'`,
        [PAGE],
      );
      await h.sql(
        `INSERT INTO role_menus (role_id, menu_id) SELECT r.id, m.id FROM roles r, menus m WHERE r.role_code = 'R_ADMIN' AND m.route_name IN ('business', $1)`,
        [PAGE],
      );
      roleId = h.admin.services.ids.encode((await h.sql<{ id: number }>(`SELECT id FROM roles WHERE role_code = 'R_ADMIN'`))[0].id);
    });

    it('is delivered to nobody and offered in no role dialog', async () => {
      await h.createUser('cp-admin', 'pass-123', ['R_ADMIN']);
      for (const as of [token, (await h.login('cp-admin', 'pass-123')).token]) {
        const routes = await call<{ routes: RouteNode[] }>('GET', '/route/user-routes', undefined, as);
        assert.ok(!flat(routes.data.routes).some((r) => r.name === 'business' || r.name === PAGE), 'no raw route.business entry, no dead page');
      }
      const tree = await call<TreeNode[]>('GET', '/system-manage/menus/tree');
      assert.ok(!flat(tree.data).some((n) => n.routeName === PAGE || n.routeName === 'business'));
      const pages = await call<{ routeName: string }[]>('GET', '/system-manage/menus/pages');
      assert.ok(!pages.data.some((p) => p.routeName === PAGE));
    });

    it("keeps its grant through the current client's menu dialog save and the older client's", async () => {
      const before = await roleMenus('R_ADMIN');
      assert.ok(before.includes(PAGE));
      const tree = (await call<TreeNode[]>('GET', '/system-manage/menus/tree')).data;
      const held = (await call<{ byRoleHomeId: string; byRoleMenuIds: string[] }>('GET', `/system-manage/roles/${roleId}/menus`)).data;
      // The current client saves the leaves of its tree the role holds: the page is not among them.
      const shown = new Set(
        flat(tree)
          .filter((n) => !n.isParent && n.resourceId)
          .map((n) => n.resourceId),
      );
      const current = await call('PATCH', `/system-manage/roles/${roleId}/menus`, {
        byRoleHomeId: held.byRoleHomeId,
        byRoleMenuIds: held.byRoleMenuIds.filter((id) => shown.has(id)),
      });
      assert.equal(current.code, '0000');
      assert.deepEqual(
        await roleMenus('R_ADMIN'),
        before.filter((n) => n !== 'business'),
        'the page grant stays (its catalog comes back with it once shown)',
      );
      // The older client echoes the ids it was given.
      assert.equal(
        (await call('PATCH', `/system-manage/roles/${roleId}/menus`, { byRoleHomeId: held.byRoleHomeId, byRoleMenuIds: held.byRoleMenuIds })).code,
        '0000',
      );
      assert.ok((await roleMenus('R_ADMIN')).includes(PAGE));
      // Unticking everything the dialog shows still keeps what it could not show.
      assert.equal((await call('PATCH', `/system-manage/roles/${roleId}/menus`, { byRoleMenuIds: [] })).code, '0000');
      assert.ok((await roleMenus('R_ADMIN')).includes(PAGE));
    });
  });
});
