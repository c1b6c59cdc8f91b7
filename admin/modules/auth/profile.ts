import { getCurrentUserId } from '../../http/context.js';
import { success } from '../../http/envelope.js';
import type { ApiRouter } from '../../http/router.js';
import { parseBody } from '../../http/validate.js';
import { toContextUser, type UserRow } from '../../auth/principals.js';
import type { AdminServices } from '../../services.js';
import { profileBody } from './schemas.js';
import { describeCurrentUser } from './session.js';

const columns = { nickName: 'nick_name', userGender: 'user_gender', userEmail: 'user_email', userPhone: 'user_phone' } as const;

/** PATCH /profile: the caller's own nick name, gender, email and phone; answers the new user-info. */
export function addProfileRoutes(router: ApiRouter, services: AdminServices): void {
  router.patch('/profile', { summary: 'Update the own profile (nick name, gender, email, phone)', guard: 'auth' }, async (req) => {
    const body = parseBody(profileBody, req.body);
    const userId = getCurrentUserId();
    const sets: string[] = [];
    const values: unknown[] = [userId];
    for (const [field, column] of Object.entries(columns) as [keyof typeof columns, string][]) {
      if (body[field] === undefined) continue;
      values.push(body[field]);
      sets.push(`${column} = $${values.length}`);
    }
    // Duplicate email or phone fails on the unique constraints (2302, 2303) and changes nothing.
    const { rows } = await services.db.query<UserRow>(
      sets.length ? `UPDATE users SET ${sets.join(', ')}, updated_at = now(), updated_by = $1 WHERE id = $1 RETURNING *` : 'SELECT * FROM users WHERE id = $1',
      values,
    );
    await services.principals.forget(userId);
    services.audit.record('profile.update', 'info', { userId, fields: Object.keys(body).filter((k) => body[k as keyof typeof body] !== undefined) });
    return success(describeCurrentUser(services, toContextUser(rows[0])), 'updated');
  });
}
