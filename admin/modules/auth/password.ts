import { Code } from '../../http/codes.js';
import { currentContext, getCurrentUserId } from '../../http/context.js';
import { BizError, success } from '../../http/envelope.js';
import { createFailureLock } from '../../http/rate-limit.js';
import type { ApiRouter } from '../../http/router.js';
import { parseBody } from '../../http/validate.js';
import type { UserRow } from '../../auth/principals.js';
import type { AdminServices } from '../../services.js';
import { verifyCaptcha } from './captcha.js';
import { passwordBody, resetByCaptchaBody, resetByOldPasswordBody } from './schemas.js';
import { issueTokensFor } from './issue-tokens.js';

/**
 * The caller's own password: PATCH /password (the client's user center: every session ends) and
 * POST /reset-password, signed in with the old password (other sessions end, the caller gets fresh
 * tokens) or signed out with a phone captcha. Both open while a password change is pending.
 */
export function addPasswordRoutes(router: ApiRouter, services: AdminServices): void {
  const { db, passwords, audit, config } = services;
  // A stolen access token must not become an oracle for the account's password.
  const failures = createFailureLock(config.loginLimitWindowSeconds, config.loginLimitPerUser);

  /** Checks the old password and that the new one differs, then stores it and ends every session. */
  const changeOwnPassword = async (userId: number, oldPassword: string, newPassword: string): Promise<UserRow> => {
    const key = `user:${userId}`;
    if (failures.isLocked(key)) throw new BizError(Code.RATE_LIMITED, 'too many wrong passwords, try again later');
    const { rows } = await db.query<UserRow>('SELECT * FROM users WHERE id = $1', [userId]);
    if (!rows[0] || !(await passwords.verify(rows[0].password, oldPassword))) {
      failures.recordFailure(key);
      audit.record('password.change_refused', 'warn', { userId, reason: 'wrong old password' });
      throw new BizError(Code.OLD_PASSWORD_WRONG, 'old password is wrong');
    }
    failures.clear(key);
    // A forced change that keeps the same password would defeat its purpose.
    if (oldPassword === newPassword) throw new BizError(Code.VALIDATION, 'newPassword: must differ from the old password');
    return storePassword(services, rows[0], newPassword, userId);
  };

  router.patch('/password', { summary: 'Change the own password (logs out every session)', guard: 'auth', openDuringPasswordChange: true }, async (req) => {
    const body = parseBody(passwordBody, req.body);
    await changeOwnPassword(getCurrentUserId(), body.oldPassword, body.newPassword);
    return success(null, 'password changed, please log in again');
  });

  router.post('/reset-password', { summary: 'Reset the own password: old password (signed in) or phone captcha' }, async (req) => {
    const body: unknown = req.body;
    if (body !== null && typeof body === 'object' && 'phone' in body) {
      const reset = parseBody(resetByCaptchaBody, body);
      await verifyCaptcha(services.kv, reset.phone, reset.code);
      const { rows } = await db.query<UserRow>('SELECT * FROM users WHERE user_phone = $1', [reset.phone]);
      const user = rows[0];
      if (!user) throw new BizError(Code.PHONE_NOT_REGISTERED, 'phone number not registered');
      if (user.status_type !== '1') throw new BizError(Code.ACCOUNT_DISABLED, 'this account is disabled');
      await storePassword(services, user, reset.password, null);
      return success(null, 'password reset, please log in');
    }
    // Public route so the captcha form works signed out; the old-password form signs in here.
    const principal = await services.authenticator.authenticate(req.headers.authorization, currentContext());
    const change = parseBody(resetByOldPasswordBody, body);
    const user = await changeOwnPassword(principal.user.id, change.oldPassword, change.newPassword);
    // Every other session ended with the version bump; this one carries on with the new version.
    const fresh = await db.query<UserRow>('SELECT * FROM users WHERE id = $1', [user.id]);
    return success(await issueTokensFor(services, fresh.rows[0] ?? user, currentContext().CTX_IMPERSONATOR_ID ?? 0), 'password changed');
  });
}

/** Stores the argon2 hash, clears mustChangePassword and ends every session of the user. */
async function storePassword(services: AdminServices, user: UserRow, newPassword: string, actorId: number | null): Promise<UserRow> {
  const hash = await services.passwords.hash(newPassword);
  await services.db.query('UPDATE users SET password = $2, must_change_password = false, updated_at = now(), updated_by = $3 WHERE id = $1', [
    user.id,
    hash,
    actorId,
  ]);
  await services.sessions.invalidate([user.id]);
  services.audit.record('password.change', 'info', { userId: user.id, method: actorId === null ? 'captcha' : 'old password' });
  return user;
}
