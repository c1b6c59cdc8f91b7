import { z } from 'zod';
import { Code } from '../../http/codes.js';
import { addResourceRoutes } from '../../resources/crud.js';
import { getCurrentUserId } from '../../http/context.js';
import { BizError, success } from '../../http/envelope.js';
import type { Fields } from '../../resources/records.js';
import { param, type ApiRouter } from '../../http/router.js';
import { optionalText, parseBody, statusSchema } from '../../http/validate.js';
import type { DbClient } from '../../db/pool.js';
import type { AdminServices } from '../../services.js';

export const userFields: Fields = {
  id: { column: 'id', kind: 'id', orderable: true },
  userName: { column: 'user_name', kind: 'text', filter: 'contains', orderable: true },
  password: { column: 'password', kind: 'text', output: false, writable: false },
  nickName: { column: 'nick_name', kind: 'text', filter: 'contains', orderable: true },
  userGender: { column: 'user_gender', kind: 'text', filter: 'eq' },
  userEmail: { column: 'user_email', kind: 'text', filter: 'contains', orderable: true },
  userPhone: { column: 'user_phone', kind: 'text', filter: 'contains' },
  lastLogin: { column: 'last_login', kind: 'time', writable: false, orderable: true },
  statusType: { column: 'status_type', kind: 'text', filter: 'eq', orderable: true },
  tokenVersion: { column: 'token_version', kind: 'int', writable: false },
  mustChangePassword: { column: 'must_change_password', kind: 'bool' },
};

const gender = z.enum(['1', '2', '3']);
const roleCodes = z.array(z.string().min(1).max(20)).max(100);
/** What a user may change about themselves (PATCH /auth/profile) and an administrator too. */
export const userProfileShape = {
  nickName: optionalText(30),
  userGender: gender.optional(),
  userEmail: z
    .union([z.literal(''), z.email().max(255)])
    .nullish()
    .transform((v) => (v === '' ? null : v)),
  userPhone: z
    .union([z.literal(''), z.string().regex(/^\+?[0-9]{5,20}$/, 'must be a phone number')])
    .nullish()
    .transform((v) => (v === '' ? null : v)),
};
const userShape = {
  ...userProfileShape,
  statusType: statusSchema.optional(),
  mustChangePassword: z.boolean().optional(),
  byUserRoleCodeList: roleCodes.optional(),
};
const createUser = z.object({ userName: z.string().trim().min(1).max(20), password: z.string().min(6).max(128), ...userShape });
const updateUser = z.object({ userName: z.string().trim().min(1).max(20).optional(), password: z.string().min(6).max(128).optional(), ...userShape });
const idsBody = z.object({ ids: z.array(z.string()).min(1).max(1000) });

/** Replaces a user's roles by code; unknown codes are an error rather than silently dropped. */
async function linkRoles(client: DbClient, userId: number, codes: string[]): Promise<void> {
  const { rows } = await client.query<{ id: number; role_code: string }>('SELECT id, role_code FROM roles WHERE role_code = ANY($1)', [codes]);
  const unknown = codes.filter((c) => !rows.some((r) => r.role_code === c));
  if (unknown.length) throw new BizError(Code.VALIDATION, `byUserRoleCodeList: unknown role codes: ${unknown.join(', ')}`);
  await client.query('DELETE FROM user_roles WHERE user_id = $1', [userId]);
  if (rows.length) await client.query('INSERT INTO user_roles (user_id, role_id) SELECT $1, unnest($2::int[])', [userId, rows.map((r) => r.id)]);
}

/** /users: the standard routes (passwords hashed, roles linked) plus forced logout. */
export function addUserRoutes(router: ApiRouter, services: AdminServices): void {
  const { db, ids, sessions, audit } = services;
  addResourceRoutes(router, services, {
    path: '/users',
    table: 'users',
    noun: 'user',
    fields: userFields,
    createSchema: createUser,
    updateSchema: updateUser,
    searchShape: { byUserRoleCodeList: roleCodes.nullish() },
    // json (parsed by JSON.parse) rather than text[] (pg's array parser allocates per element, ADR 0207).
    computed: {
      byUserRoleCodeList: `COALESCE((SELECT json_agg(r.role_code ORDER BY r.id) FROM user_roles ur JOIN roles r ON r.id = ur.role_id WHERE ur.user_id = users.id), '[]')`,
    },
    buttons: { create: 'B_SYSTEM_USER_CREATE', update: 'B_SYSTEM_USER_UPDATE', delete: 'B_SYSTEM_USER_DELETE', batchDelete: 'B_SYSTEM_USER_BATCH_DELETE' },
    hooks: {
      async beforeWrite(input, action, id) {
        if (typeof input.password !== 'string') return {};
        const hashed = { password: await services.passwords.hash(input.password) };
        // The own record saved with a new password is a password change (the older client has no
        // other form): it lifts a pending change, unless the editor sets the flag itself.
        const own = action === 'update' && id === getCurrentUserId() && input.mustChangePassword === undefined;
        return own ? { ...hashed, must_change_password: false } : hashed;
      },
      async afterWrite(client, id, input) {
        if (Array.isArray(input.byUserRoleCodeList)) await linkRoles(client, id, input.byUserRoleCodeList as string[]);
      },
      async afterCommit(changed, action, input) {
        // A new password or a disabled account ends every existing session of that user.
        if (action === 'update' && input && (input.password !== undefined || (input.statusType !== undefined && input.statusType !== '1'))) {
          await sessions.invalidate(changed);
          audit.record('session.invalidate', 'info', {
            userIds: changed,
            reason: input.password !== undefined ? 'password changed by administrator' : 'account disabled',
          });
        }
      },
      async beforeDelete(targets) {
        if (targets.includes(getCurrentUserId())) throw new BizError(Code.FAIL, 'you cannot delete your own account');
      },
      searchWhere(body, p) {
        const codes = body.byUserRoleCodeList;
        return Array.isArray(codes) && codes.length
          ? [`EXISTS (SELECT 1 FROM user_roles ur JOIN roles r ON r.id = ur.role_id WHERE ur.user_id = users.id AND r.role_code = ANY(${p(codes)}::text[]))`]
          : [];
      },
    },
  });

  const offline = async (userIds: number[]): Promise<void> => {
    await sessions.invalidate(userIds);
    audit.record('session.invalidate', 'info', { userIds, reason: 'forced logout by administrator' });
  };
  router.post('/users/batch-offline', { summary: 'Force several users to log in again', tags: ['users'] }, async (req) => {
    const body = parseBody(idsBody, req.body);
    const targets = body.ids.map((v, i) => ids.decode(v, `ids.${i}`));
    await offline(targets);
    return success({ count: targets.length }, 'sessions ended');
  });
  router.post('/users/{id}/offline', { summary: 'Force a user to log in again', tags: ['users'] }, async (req) => {
    const id = ids.decode(param(req, 'id'));
    const { rowCount } = await db.query('SELECT 1 FROM users WHERE id = $1', [id]);
    if (!rowCount) throw new BizError(Code.NOT_FOUND, 'user not found');
    await offline([id]);
    return success(null, 'sessions ended');
  });
}
