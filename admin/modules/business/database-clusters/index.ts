import { z } from 'zod';
import { getCurrentUser } from '../../../http/context.js';
import { Code } from '../../../http/codes.js';
import { BizError, success, successExtra } from '../../../http/envelope.js';
import { param, type ApiRouter } from '../../../http/router.js';
import { pageQuerySchema, parseBody } from '../../../http/validate.js';
import type { AdminServices } from '../../../services.js';
import { createClusterApi, toBizError, type ClusterApi } from './kube.js';
import { loadKubeConfig } from '../../../../lib/kube/client.js';
import { switchoverRefusal, toClusterDetail, toClusterRecord } from './records.js';
import { toDatabaseListing, toRoleListing } from './managed.js';

/**
 * Business module: DatabaseClusters (keelson.io/v1) through the Kubernetes API. Mounted at
 * /api/v1/business/database-clusters behind API permission; writes also need button codes.
 */
export const tags = ['database-clusters'];

export const ClusterButtons = {
  create: 'B_DBC_CLUSTER_CREATE',
  update: 'B_DBC_CLUSTER_UPDATE',
  delete: 'B_DBC_CLUSTER_DELETE',
} as const;

const dnsLabel = z.string().regex(/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/, 'must be a DNS label (lower-case letters, digits, -)');
const specBody = z.record(z.string(), z.unknown());
const searchBody = pageQuerySchema.extend({ namespace: dnsLabel.nullish(), name: z.string().max(63).nullish(), phase: z.string().max(32).nullish() });
const createBody = z.object({ namespace: dnsLabel.default('default'), name: dnsLabel, spec: specBody.default({}) });
const updateBody = z.object({ spec: specBody });
const scaleBody = z.object({ instances: z.number().int().min(1).max(64) });
const switchoverBody = z.object({ targetInstance: dnsLabel });

const sortable = new Set(['name', 'namespace', 'instances', 'phase', 'createdAt']);

export function register(router: ApiRouter, services: AdminServices): void {
  let api: ClusterApi | undefined;
  // Loaded on first use so the admin starts (and the rest of it works) without Kubernetes access.
  const clusters = (): ClusterApi => {
    if (!api) {
      try {
        api = createClusterApi(loadKubeConfig({ kubeconfig: services.config.kubeconfig }));
      } catch (error) {
        throw toBizError(error, 'kubeconfig');
      }
    }
    return api;
  };
  const target = (req: Parameters<Parameters<ApiRouter['get']>[2]>[0]) => {
    const namespace = dnsLabel.safeParse(param(req, 'namespace'));
    const name = dnsLabel.safeParse(param(req, 'name'));
    if (!namespace.success || !name.success) throw new BizError(Code.VALIDATION, 'namespace and name must be DNS labels (lower-case letters, digits, -)');
    return { namespace: namespace.data, name: name.data };
  };

  router.post('/clusters/search', { summary: 'Search DatabaseClusters' }, async (req) => {
    const body = parseBody(searchBody, req.body);
    let records = (await clusters().list(body.namespace ?? undefined)).map(toClusterRecord);
    if (body.name) records = records.filter((r) => String(r.name).includes(body.name as string));
    if (body.phase) records = records.filter((r) => r.phase === body.phase);
    for (const key of [...(body.orderBy ?? [])].reverse()) {
      const desc = key.startsWith('-');
      const field = desc ? key.slice(1) : key;
      if (!sortable.has(field)) throw new BizError(Code.VALIDATION, `orderBy: cannot sort by "${field}"`);
      records.sort(
        (a, b) => (String(a[field] ?? '') < String(b[field] ?? '') ? -1 : String(a[field] ?? '') > String(b[field] ?? '') ? 1 : 0) * (desc ? -1 : 1),
      );
    }
    const start = (body.current - 1) * body.size;
    return successExtra({ records: records.slice(start, start + body.size), total: records.length, current: body.current, size: body.size });
  });

  router.get('/clusters/{namespace}/{name}', { summary: 'Get one DatabaseCluster' }, async (req) => {
    const { namespace, name } = target(req);
    return success(toClusterDetail(await clusters().get(namespace, name)));
  });

  router.get(
    '/clusters/{namespace}/{name}/roles-and-databases',
    { summary: "A cluster's declared roles and Database objects, with what the leader applied" },
    async (req) => {
      const { namespace, name } = target(req);
      const cluster = await clusters().get(namespace, name);
      return success({ roles: toRoleListing(cluster), databases: toDatabaseListing(await clusters().databases(namespace), name) });
    },
  );

  router.post('/clusters', { summary: 'Create a DatabaseCluster', buttons: { codes: [ClusterButtons.create] } }, async (req) => {
    const body = parseBody(createBody, req.body);
    const user = getCurrentUser();
    const created = await clusters().create(body.namespace, body.name, body.spec, {
      'app.kubernetes.io/managed-by': 'keelson-admin',
      ...(user ? { 'keelson.io/created-by': user.userName.replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 63) } : {}),
    });
    services.audit.record('cluster.create', 'info', { userId: user?.id, namespace: body.namespace, name: body.name });
    return success(toClusterDetail(created), 'created');
  });

  router.patch(
    '/clusters/{namespace}/{name}',
    { summary: 'Update the spec of a DatabaseCluster (merge patch)', buttons: { codes: [ClusterButtons.update] } },
    async (req) => {
      const { namespace, name } = target(req);
      const body = parseBody(updateBody, req.body);
      return success(toClusterDetail(await clusters().patchSpec(namespace, name, body.spec)), 'updated');
    },
  );

  router.post('/clusters/{namespace}/{name}/scale', { summary: 'Scale a DatabaseCluster', buttons: { codes: [ClusterButtons.update] } }, async (req) => {
    const { namespace, name } = target(req);
    const { instances } = parseBody(scaleBody, req.body);
    return success(toClusterDetail(await clusters().patchSpec(namespace, name, { instances })), 'scaled');
  });

  router.post(
    '/clusters/{namespace}/{name}/switchover',
    { summary: 'Switch the primary over to another instance', buttons: { codes: [ClusterButtons.update] } },
    async (req) => {
      const { namespace, name } = target(req);
      const { targetInstance } = parseBody(switchoverBody, req.body);
      const current = await clusters().get(namespace, name);
      const refusal = switchoverRefusal(current, targetInstance);
      if (refusal) throw new BizError(Code.VALIDATION, `targetInstance: ${refusal}`);
      const patched = await clusters().patchSpec(namespace, name, { switchover: { targetInstance } });
      services.audit.record('cluster.switchover', 'warn', { userId: getCurrentUser()?.id, namespace, name, targetInstance });
      return success(toClusterDetail(patched), 'switchover requested');
    },
  );

  router.delete('/clusters/{namespace}/{name}', { summary: 'Delete a DatabaseCluster', buttons: { codes: [ClusterButtons.delete] } }, async (req) => {
    const { namespace, name } = target(req);
    await clusters().remove(namespace, name);
    services.audit.record('cluster.delete', 'warn', { userId: getCurrentUser()?.id, namespace, name });
    return success({ deletedId: `${namespace}/${name}` }, 'deleted');
  });
}

/** The module's pages as the Soybean front end names them (web/src/views/business/database-clusters). */
export const ClusterMenus = {
  catalog: { routeName: 'business', routePath: '/business', component: 'layout.base', menuName: 'business', icon: 'mdi:briefcase-outline', order: 5 },
  page: {
    routeName: 'business_database-clusters',
    routePath: '/business/database-clusters',
    component: 'view.business_database-clusters',
    menuName: 'database clusters',
    icon: 'mdi:database-outline',
    order: 1,
  },
} as const;

/**
 * Makes the module grantable to roles: its button codes, and, where the front end has the page
 * (CLUSTERS_PAGE, after copying web/), the page under the business catalog (R_SUPER sees it at
 * once; other roles once granted) with the buttons attached, so the role dialog's button tree
 * offers them there. Without the page nothing is seeded that a stock client would show as a
 * dead entry, and a page seeded before is neither delivered nor offered (its grants are kept).
 * Idempotent: runs at every start.
 */
export async function init(services: AdminServices): Promise<void> {
  const { db } = services;
  const { page } = ClusterMenus;
  if (services.config.clustersPage) await seedPage(db);
  else services.clientPages.markAbsent(page.routeName);
  for (const [action, code] of Object.entries(ClusterButtons)) {
    await db.query(
      `INSERT INTO buttons (button_code, button_desc, menu_id) VALUES ($1, $2, (SELECT id FROM menus WHERE route_name = $3))
       ON CONFLICT (button_code) DO UPDATE SET menu_id = COALESCE(buttons.menu_id, EXCLUDED.menu_id)`,
      [code, `${action} database cluster`, page.routeName],
    );
  }
}

async function seedPage(db: AdminServices['db']): Promise<void> {
  const { catalog, page } = ClusterMenus;
  // ON CONFLICT without a target: an existing route name or path (an administrator's own) wins.
  await db.query(
    `INSERT INTO menus (menu_name, menu_type, route_name, route_path, parent_id, component, icon, "order") VALUES ($1, '1', $2, $3, 0, $4, $5, $6) ON CONFLICT DO NOTHING`,
    [catalog.menuName, catalog.routeName, catalog.routePath, catalog.component, catalog.icon, catalog.order],
  );
  await db.query(
    `INSERT INTO menus (menu_name, menu_type, route_name, route_path, parent_id, component, icon, "order")
     SELECT $1, '2', $2, $3, id, $4, $5, $6 FROM menus WHERE route_name = $7 ON CONFLICT DO NOTHING`,
    [page.menuName, page.routeName, page.routePath, page.component, page.icon, page.order, catalog.routeName],
  );
}
