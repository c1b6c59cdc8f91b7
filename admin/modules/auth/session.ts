import { Code } from '../../core/codes.js';
import { currentContext, getCurrentUserId, isSuperAdmin } from '../../core/context.js';
import { BizError, success } from '../../core/envelope.js';
import { formatTime } from '../../core/records.js';
import { ApiRouter, param } from '../../core/router.js';
import { parseBody } from '../../core/validate.js';
import type { UserRow } from '../../auth/principals.js';
import type { AdminServices } from '../../services.js';
import { passwordBody } from './schemas.js';
import { issueTokensFor } from './tokens.js';

/** Authenticated routes about the caller's own session: user-info, password, impersonation. */
export function addSessionRoutes(router: ApiRouter, services: AdminServices): void {
  const { db, ids, audit } = services;

  router.get('/user-info', { summary: 'Current user, roles and buttons', guard: 'auth' }, async () => {
    const ctx = currentContext();
    // The context user comes from the principal cache, which every user write and login refreshes.
    const user = ctx.CTX_USER;
    if (!user) throw new BizError(Code.INVALID_SESSION, 'user does not exist');
    const info: Record<string, unknown> = {
      userId: ids.encode(user.id),
      userName: user.userName,
      nickName: user.nickName,
      userGender: user.userGender,
      userEmail: user.userEmail,
      userPhone: user.userPhone,
      lastLogin: user.lastLogin ? user.lastLogin.getTime() : null,
      statusType: user.statusType,
      tokenVersion: user.tokenVersion,
      mustChangePassword: user.mustChangePassword,
      roles: ctx.CTX_ROLE_CODES,
      buttons: ctx.CTX_BUTTON_CODES,
    };
    if (user.lastLogin) info.fmtLastLogin = formatTime(user.lastLogin);
    if (ctx.CTX_IMPERSONATOR_ID !== undefined) {
      info.impersonating = true;
      info.impersonatorId = ids.encode(ctx.CTX_IMPERSONATOR_ID);
    }
    return success(info);
  });

  router.patch('/password', { summary: 'Change the own password (logs out every session)', guard: 'auth' }, async (req) => {
    const body = parseBody(passwordBody, req.body);
    const userId = getCurrentUserId();
    const { rows } = await db.query<UserRow>('SELECT * FROM users WHERE id = $1', [userId]);
    if (!rows[0] || !(await services.passwords.verify(rows[0].password, body.oldPassword))) throw new BizError(Code.OLD_PASSWORD_WRONG, 'old password is wrong');
    const hash = await services.passwords.hash(body.newPassword);
    await db.query('UPDATE users SET password = $2, must_change_password = false, updated_at = now(), updated_by = $1 WHERE id = $1', [userId, hash]);
    await services.sessions.invalidate([userId]);
    audit.record('password.change', 'info', { userId });
    return success(null, 'password changed, please log in again');
  });

  // Static path: mounted before /impersonate/{userId}.
  router.post('/impersonate/exit', { summary: 'End an impersonation (invalidates its tokens)', guard: 'auth' }, async () => {
    const ctx = currentContext();
    if (ctx.CTX_IMPERSONATOR_ID === undefined) throw new BizError(Code.FAIL, 'not impersonating');
    const userId = getCurrentUserId();
    await services.sessions.invalidate([userId]);
    audit.record('impersonation.exit', 'info', { userId, impersonatorId: ctx.CTX_IMPERSONATOR_ID });
    return success(null, 'impersonation ended');
  });

  router.post('/impersonate/{userId}', { summary: 'Impersonate a user (R_SUPER only)', guard: 'auth' }, async (req) => {
    const ctx = currentContext();
    if (!isSuperAdmin()) throw new BizError(Code.SUPER_ADMIN_ONLY, 'only a super administrator may impersonate');
    const targetId = ids.decode(param(req, 'userId'), 'userId');
    const { rows } = await db.query<UserRow>('SELECT * FROM users WHERE id = $1', [targetId]);
    const target = rows[0];
    if (!target) throw new BizError(Code.TARGET_USER_NOT_FOUND, 'target user not found');
    if (target.status_type !== '1') throw new BizError(Code.ACCOUNT_DISABLED, 'target user is disabled');
    // Impersonating while impersonating keeps the original super administrator as the actor.
    const actor = ctx.CTX_IMPERSONATOR_ID ?? getCurrentUserId();
    audit.record('impersonation.start', 'warn', { impersonatorId: actor, targetUserId: targetId, requestId: ctx.CTX_X_REQUEST_ID });
    return success(await issueTokensFor(services, target, actor));
  });
}
