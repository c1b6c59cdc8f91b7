import { getCurrentUserId, isSuperAdmin } from '../../http/context.js';
import { addResourceRoutes } from '../../resources/crud.js';
import { z } from 'zod';
import { Code } from '../../http/codes.js';
import { BizError, success } from '../../http/envelope.js';
import { parseBody } from '../../http/validate.js';
import type { Fields } from '../../resources/records.js';
import { param, type ApiRouter } from '../../http/router.js';
import type { AdminServices } from '../../services.js';
import { apiGrantTree } from './auth-trees.js';

export const apiFields: Fields = {
  id: { column: 'id', kind: 'id', orderable: true },
  apiPath: { column: 'api_path', kind: 'text', filter: 'contains', orderable: true },
  apiMethod: { column: 'api_method', kind: 'text', filter: 'eq', orderable: true },
  summary: { column: 'summary', kind: 'text', filter: 'eq' },
  tags: { column: 'tags', kind: 'textArray', filter: 'anyOf' },
  statusType: { column: 'status_type', kind: 'text', filter: 'eq' },
  isSystem: { column: 'is_system', kind: 'bool' },
};

/** Non-super users see only the APIs their own roles grant. */
export const grantedOnly = (p: (v: unknown) => string): string | undefined =>
  isSuperAdmin()
    ? undefined
    : `id IN (SELECT ra.api_id FROM role_apis ra JOIN user_roles ur ON ur.role_id = ra.role_id WHERE ur.user_id = ${p(getCurrentUserId())})`;

/** /apis: read-only (search, get, tree, tags) apart from a status switch; rows come from the route reconciliation. */
export function addApiRoutes(router: ApiRouter, services: AdminServices): void {
  const { db, ids } = services;
  addResourceRoutes(router, services, {
    path: '/apis',
    table: 'apis',
    noun: 'API',
    fields: apiFields,
    actions: ['search', 'get'],
    defaultOrder: 'api_path ASC, api_method ASC',
    hooks: { scope: grantedOnly },
  });

  const visible = async () => {
    const params: unknown[] = [];
    const scope = grantedOnly((v) => `$${params.push(v)}`);
    return db.query<{ id: number; api_path: string; api_method: string; summary: string; tags: string[]; status_type: string }>(
      `SELECT id, api_path, api_method, summary, tags, status_type FROM apis ${scope ? `WHERE ${scope}` : ''} ORDER BY api_path, api_method`,
      params,
    );
  };

  router.get('/apis/tree', { summary: 'APIs grouped by tag, as a grant tree', tags: ['apis'] }, async () => {
    const { rows } = await visible();
    return success(
      apiGrantTree(
        rows.map((r) => ({ id: r.id, apiPath: r.api_path, apiMethod: r.api_method, summary: r.summary, tags: r.tags, statusType: r.status_type })),
        (id) => ids.encode(id),
      ),
    );
  });

  // The one write on APIs: enabling or disabling one for everybody (a disabled grant answers 2200).
  router.patch('/apis/{id}/status', { summary: 'Enable or disable an API', tags: ['apis'] }, async (req) => {
    const { statusType } = parseBody(
      z.object({ statusType: z.enum(['1', '2', 'enable', 'disable']).transform((v) => (v === 'enable' ? '1' : v === 'disable' ? '2' : v)) }),
      req.body,
    );
    const { rows } = await db.query<{ id: number }>('UPDATE apis SET status_type = $2, updated_at = now(), updated_by = $3 WHERE id = $1 RETURNING id', [
      ids.decode(param(req, 'id')),
      statusType,
      getCurrentUserId(),
    ]);
    if (!rows[0]) throw new BizError(Code.NOT_FOUND, 'API not found');
    await services.principals.invalidateAll();
    return success({ id: ids.encode(rows[0].id), statusType }, 'updated');
  });

  router.get('/apis/tags', { summary: 'All API tags', tags: ['apis'] }, async () => {
    const { rows } = await visible();
    return success([...new Set(rows.flatMap((r) => r.tags))].sort());
  });
}
