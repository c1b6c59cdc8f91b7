import { Code } from '../../http/codes.js';
import { currentContext, getCurrentUserId, isSuperAdmin, type ContextUser } from '../../http/context.js';
import { BizError, success } from '../../http/envelope.js';
import { formatTime } from '../../resources/records.js';
import { ApiRouter, param } from '../../http/router.js';
import type { UserRow } from '../../auth/principals.js';
import type { AdminServices } from '../../services.js';
import { issueTokensFor } from './issue-tokens.js';

/** user-info as the client stores it: the user, their roles and buttons, and any impersonation. */
export function describeCurrentUser(services: AdminServices, user: ContextUser): Record<string, unknown> {
  const ctx = currentContext();
  const { ids } = services;
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
  return info;
}

/** Authenticated routes about the caller's own session: user-info and impersonation. */
export function addSessionRoutes(router: ApiRouter, services: AdminServices): void {
  const { db, ids, audit } = services;

  router.get('/user-info', { summary: 'Current user, roles and buttons', guard: 'auth', openDuringPasswordChange: true }, async () => {
    // The context user comes from the principal cache, which every user write and login refreshes.
    const user = currentContext().CTX_USER;
    if (!user) throw new BizError(Code.INVALID_SESSION, 'user does not exist');
    return success(describeCurrentUser(services, user));
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
