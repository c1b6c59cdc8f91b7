import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startHarness, type Harness } from './support.js';

const webFile = (path: string): string => readFileSync(new URL(`../../web/${path}`, import.meta.url), 'utf8');
const apiModule = 'src/service/api/database-clusters.ts';
const page = 'src/views/business/database-clusters/index.vue';

interface ClientCall {
  fn: string;
  method: string;
  template: string;
}

/** Every `export function fetchX` of the API module with the method and path it requests. */
function clientCalls(source: string): ClientCall[] {
  const constants = new Map([...source.matchAll(/const (\w+) = '([^']+)';/g)].map((m) => [m[1], m[2]]));
  return [...source.matchAll(/export function (fetch\w+)\([^)]*\) \{\s*return request<[^>]*>\(\{ url: `([^`]+)`, method: '(\w+)'/g)].map((m) => ({
    fn: m[1],
    // `${base}` is the module constant; `${namespace}` and the like are path parameters.
    template: `/api/v1${m[2].replace(/\$\{(\w+)\}/g, (_, name: string) => constants.get(name) ?? `{${name}}`)}`,
    method: m[3],
  }));
}

describe('admin web pages: the DatabaseClusters page, its menu and its API calls', () => {
  let h: Harness;
  let token: string;
  let home: string;
  const saved: Record<string, string | undefined> = {};

  before(async () => {
    // No Kubernetes anywhere: not in a pod, no KUBECONFIG, an empty home (no ~/.kube/config).
    home = mkdtempSync(join(tmpdir(), 'keelson-admin-home-'));
    for (const key of ['HOME', 'KUBECONFIG', 'KUBERNETES_SERVICE_HOST', 'KUBERNETES_SERVICE_PORT']) saved[key] = process.env[key];
    process.env.HOME = home;
    delete process.env.KUBECONFIG;
    delete process.env.KUBERNETES_SERVICE_HOST;
    delete process.env.KUBERNETES_SERVICE_PORT;
    // The front end has the page (web/ copied into it): only then is its menu seeded.
    h = await startHarness({ CLUSTERS_PAGE: 'true' });
    token = (await h.login('admin', 'admin-pass-1')).token;
  });
  after(async () => {
    await h?.stop();
    for (const [key, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[key];
      else process.env[key] = value;
    }
    rmSync(home, { recursive: true, force: true });
  });

  const call = <T = Record<string, unknown>>(method: string, path: string, body?: unknown, as = token) =>
    h.call<T>(method, `/api/v1${path}`, { token: as, body });

  it('every call of the page goes to a route the backend serves', async () => {
    const calls = clientCalls(webFile(apiModule));
    assert.deepEqual(calls.map((c) => c.fn).sort(), ['fetchGetCluster', 'fetchScaleCluster', 'fetchSearchClusters', 'fetchSwitchoverCluster']);
    const served = new Set(
      (await h.sql<{ api_method: string; api_path: string }>('SELECT api_method, api_path FROM apis')).map((a) => `${a.api_method} ${a.api_path}`),
    );
    for (const c of calls) assert.ok(served.has(`${c.method} ${c.template}`), `${c.fn}: ${c.method} ${c.template} is in the route table`);
    // The view calls only these functions, and no URL of its own.
    const vue = webFile(page);
    const used = [...vue.matchAll(/\b(fetch\w+)\(/g)].map((m) => m[1]);
    assert.ok(used.length >= 4);
    for (const fn of used)
      assert.ok(
        calls.some((c) => c.fn === fn),
        `${fn} is defined in the API module`,
      );
    assert.doesNotMatch(vue, /url:|\/api\/v1|axios|fetch\(/);
    const buttons = [...vue.matchAll(/hasAuth\('(\w+)'\)/g)].map((m) => m[1]);
    assert.ok(buttons.length > 0);
    const seeded = new Set((await h.sql<{ button_code: string }>('SELECT button_code FROM buttons')).map((b) => b.button_code));
    for (const code of buttons) assert.ok(seeded.has(code), `button ${code} is seeded`);
  });

  it('seeds the page under a business catalog with its buttons attached, and shows it to R_SUPER', async () => {
    const menus = await h.sql<{ route_name: string; route_path: string; component: string; parent: string | null }>(
      `SELECT m.route_name, m.route_path, m.component, p.route_name AS parent FROM menus m LEFT JOIN menus p ON p.id = m.parent_id WHERE m.route_name IN ('business', 'business_database-clusters') ORDER BY m.route_name`,
    );
    assert.deepEqual(menus, [
      { route_name: 'business', route_path: '/business', component: 'layout.base', parent: null },
      { route_name: 'business_database-clusters', route_path: '/business/database-clusters', component: 'view.business_database-clusters', parent: 'business' },
    ]);
    type Node = { label: string; buttonCode?: string; children?: Node[] };
    const tree = await call<Node[]>('GET', '/system-manage/menus/buttons/tree');
    const flat = (nodes: Node[]): Node[] => nodes.flatMap((n) => [n, ...flat(n.children ?? [])]);
    const pageNode = flat(tree.data).find((n) => n.label === 'database clusters');
    assert.ok(pageNode, 'the button tree offers the page');
    assert.deepEqual(pageNode.children?.map((c) => c.buttonCode).sort(), ['B_DBC_CLUSTER_CREATE', 'B_DBC_CLUSTER_DELETE', 'B_DBC_CLUSTER_UPDATE']);
    const routes = await call<{ routes: { name: string; children?: { name: string; component: string }[] }[] }>('GET', '/route/user-routes');
    const business = routes.data.routes.find((r) => r.name === 'business');
    assert.equal(business?.children?.find((c) => c.name === 'business_database-clusters')?.component, 'view.business_database-clusters');
  });

  it('the page, its APIs and its buttons are grantable to another role through the role dialogs', async () => {
    const userId = await h.createUser('dbc-operator', 'pass-123', ['R_ADMIN']);
    const operator = (await h.login('dbc-operator', 'pass-123')).token;
    const before = await call<{ routes: { name: string }[] }>('GET', '/route/user-routes', undefined, operator);
    assert.ok(!before.data.routes.some((r) => r.name === 'business'), 'not granted yet');
    const [role] = await h.sql<{ id: number }>(`SELECT id FROM roles WHERE role_code = 'R_ADMIN'`);
    const roleId = h.admin.services.ids.encode(role.id);
    const enc = (rows: { id: number }[]) => rows.map((r) => h.admin.services.ids.encode(r.id));
    const held = await call<{ byRoleMenuIds: string[] }>('GET', `/system-manage/roles/${roleId}/menus`);
    const pageId = enc(await h.sql<{ id: number }>(`SELECT id FROM menus WHERE route_name = 'business_database-clusters'`));
    assert.equal((await call('PATCH', `/system-manage/roles/${roleId}/menus`, { byRoleMenuIds: [...held.data.byRoleMenuIds, ...pageId] })).code, '0000');
    const buttonIds = enc(await h.sql<{ id: number }>(`SELECT id FROM buttons WHERE button_code = 'B_DBC_CLUSTER_UPDATE'`));
    assert.equal((await call('PATCH', `/system-manage/roles/${roleId}/buttons`, { byRoleButtonIds: buttonIds })).code, '0000');
    const apis = await call<{ byRoleApiIds: string[] }>('GET', `/system-manage/roles/${roleId}/apis`);
    const clusterApis = enc(await h.sql<{ id: number }>(`SELECT id FROM apis WHERE 'database-clusters' = ANY(tags)`));
    assert.equal((await call('PATCH', `/system-manage/roles/${roleId}/apis`, { byRoleApiIds: [...apis.data.byRoleApiIds, ...clusterApis] })).code, '0000');

    const after = await call<{ routes: { name: string; children?: { name: string }[] }[] }>('GET', '/route/user-routes', undefined, operator);
    assert.ok(
      after.data.routes.find((r) => r.name === 'business')?.children?.some((c) => c.name === 'business_database-clusters'),
      "the page is in the operator's menu",
    );
    const info = await call<{ buttons: string[] }>('GET', '/auth/user-info', undefined, operator);
    assert.ok(info.data.buttons.includes('B_DBC_CLUSTER_UPDATE'));
    // Granted and authorised: what stands in the way now is the missing Kubernetes API.
    assert.equal((await call('POST', '/business/database-clusters/clusters/search', {}, operator)).code, '4003');
    assert.ok(userId > 0);
  });

  it('without a Kubernetes API says so plainly and how to give one, instead of a TLS message', async () => {
    const reply = await call('POST', '/business/database-clusters/clusters/search', {});
    assert.equal(reply.status, 200);
    assert.equal(reply.code, '4003');
    assert.match(reply.msg, /no Kubernetes API is configured/);
    assert.match(reply.msg, /--kubeconfig/);
    assert.match(reply.msg, /KUBECONFIG/);
    assert.match(reply.msg, /pod/);
    assert.doesNotMatch(reply.msg, /skipTLSVerify|HTTP protocol/);
    assert.equal((await call('GET', '/business/database-clusters/clusters/default/demo')).code, '4003');
    assert.equal((await call('GET', '/auth/user-info')).code, '0000', 'the rest of the admin works');
  });
});
