import { Code } from '../../http/codes.js';
import { BizError, success } from '../../http/envelope.js';
import { ApiRouter } from '../../http/router.js';
import { parseBody } from '../../http/validate.js';
import type { UserRow } from '../../auth/principals.js';
import { KvUnavailableError } from '../../cache/kv.js';
import type { AdminServices } from '../../services.js';
import { withTransaction } from '../../db/pool.js';
import { createFailureLock } from '../../http/rate-limit.js';
import { issueCaptcha, verifyCaptcha as verifyCaptchaCode } from './captcha.js';
import { captchaBody, codeLoginBody, loginBody, refreshBody, registerBody } from './schemas.js';
import { issueTokensFor } from './issue-tokens.js';

/** Public authentication routes: login, captcha, code login, registration, token refresh. */
export function addLoginRoutes(router: ApiRouter, services: AdminServices): void {
  const { db, passwords, audit, config, loginLimiter } = services;
  // Per user name only failures count, so a user logging in often is never locked out by it.
  const failures = createFailureLock(config.loginLimitWindowSeconds, config.loginLimitPerUser);
  const nameKey = (userName: string): string => userName.toLowerCase();

  const verifyCaptcha = (phone: string, code: string): Promise<void> => verifyCaptchaCode(services.kv, phone, code);

  router.post('/login', { summary: 'Log in with user name and password' }, async (req) => {
    const body = parseBody(loginBody, req.body);
    const userName = typeof body.userName === 'string' ? body.userName.trim() : '';
    const password = typeof body.password === 'string' ? body.password : '';
    const address = req.ip ?? 'unknown';
    // Per client address every attempt counts.
    const wait = loginLimiter.hit(`addr:${address}`, config.loginLimitPerAddress);
    if (wait > 0 || failures.isLocked(nameKey(userName))) {
      audit.record('login.rate_limited', 'warn', { userName, address });
      throw new BizError(Code.RATE_LIMITED, `too many login attempts, try again in ${Math.max(wait, 1)} s`);
    }
    const found =
      userName.length > 0 && userName.length <= 20 && password.length <= 128
        ? await db.query<UserRow>('SELECT * FROM users WHERE user_name = $1', [userName])
        : undefined;
    const user = found?.rows[0];
    // Verify against a dummy hash for unknown users so response time does not reveal them.
    const verified = user ? await passwords.verify(user.password, password) : (await passwords.verify(await passwords.dummyHash(), password), false);
    if (!user || !verified) {
      failures.recordFailure(nameKey(userName));
      audit.record('login.failure', 'warn', { userName, address, reason: user ? 'wrong password' : 'unknown user' });
      throw new BizError(Code.WRONG_CREDENTIALS, 'wrong user name or password');
    }
    if (user.status_type !== '1') {
      audit.record('login.failure', 'warn', { userName, userId: user.id, address, reason: 'account disabled' });
      throw new BizError(Code.ACCOUNT_DISABLED, 'this account is disabled');
    }
    failures.clear(nameKey(userName));
    await db.query('UPDATE users SET last_login = now() WHERE id = $1', [user.id]);
    await services.principals.forget(user.id);
    const tokens = await issueTokensFor(services, user);
    audit.record('login.success', 'info', { userName, userId: user.id, address });
    return success({ ...tokens, mustChangePassword: user.must_change_password });
  });

  router.post('/captcha', { summary: 'Send a login or registration captcha to a phone' }, async (req) => {
    const { phone } = parseBody(captchaBody, req.body);
    // Sending codes costs money once an SMS gateway is attached: the per-address login budget applies.
    const wait = loginLimiter.hit(`captcha-addr:${req.ip ?? 'unknown'}`, config.loginLimitPerAddress);
    if (wait > 0) throw new BizError(Code.RATE_LIMITED, `too many captcha requests, try again in ${wait} s`);
    let code: string;
    try {
      code = await issueCaptcha(services.kv, phone);
    } catch (error) {
      if (error instanceof KvUnavailableError) throw new BizError(Code.CAPTCHA_SEND_FAILED);
      throw error;
    }
    // No SMS gateway yet: outside production the log stands in for it.
    if (process.env.NODE_ENV !== 'production')
      services.logger.info({ phone, sms: `Keelson verification code: ${code}` }, 'captcha issued (development delivery)');
    return success(null, 'captcha sent');
  });

  router.post('/code-login', { summary: 'Log in with a phone captcha' }, async (req) => {
    const { phone, code } = parseBody(codeLoginBody, req.body);
    await verifyCaptcha(phone, code);
    const { rows } = await db.query<UserRow>('SELECT * FROM users WHERE user_phone = $1', [phone]);
    const user = rows[0];
    if (!user) throw new BizError(Code.PHONE_NOT_REGISTERED, 'phone number not registered');
    if (user.status_type !== '1') throw new BizError(Code.ACCOUNT_DISABLED, 'this account is disabled');
    await db.query('UPDATE users SET last_login = now() WHERE id = $1', [user.id]);
    await services.principals.forget(user.id);
    audit.record('login.success', 'info', { userName: user.user_name, userId: user.id, address: req.ip, method: 'captcha' });
    return success(await issueTokensFor(services, user));
  });

  router.post('/register', { summary: 'Register with a phone captcha' }, async (req) => {
    const body = parseBody(registerBody, req.body);
    await verifyCaptcha(body.phone, body.code);
    const userName = body.userName ?? body.phone;
    const hash = await passwords.hash(body.password);
    await withTransaction(db, async (client) => {
      const { rows } = await client.query<{ id: number }>(
        `INSERT INTO users (user_name, password, nick_name, user_phone) VALUES ($1, $2, $1, $3) RETURNING id`,
        [userName, hash, body.phone],
      );
      await client.query(`INSERT INTO user_roles (user_id, role_id) SELECT $1, id FROM roles WHERE role_code = 'R_USER' AND status_type = '1'`, [rows[0].id]);
    });
    return success(null, 'registered');
  });

  router.post('/refresh-token', { summary: 'Exchange a refresh token for new tokens' }, async (req) => {
    const { refreshToken } = parseBody(refreshBody, req.body);
    if (!refreshToken) throw new BizError(Code.REFRESH_TOKEN_MISSING, 'refresh token missing');
    const verified = await services.tokens.verify(refreshToken);
    // Never 2103 here: the client answers 2103 by calling refresh again, which would loop.
    if (!verified.ok)
      throw verified.reason === 'expired'
        ? new BizError(Code.REFRESH_TOKEN_EXPIRED, 'login expired, please log in again')
        : new BizError(Code.INVALID_TOKEN, 'invalid refresh token');
    const data = verified.payload.data;
    if (data.tokenType !== 'refreshToken') throw new BizError(Code.NOT_REFRESH_TOKEN, 'this token is not a refresh token');
    const { rows } = await db.query<UserRow>('SELECT * FROM users WHERE id = $1', [data.userId]);
    const user = rows[0];
    if (!user) throw new BizError(Code.INVALID_SESSION, `user ${data.userId} does not exist`);
    if (user.status_type !== '1') throw new BizError(Code.ACCOUNT_DISABLED, 'this account is disabled');
    const stored = await services.sessions.currentVersion(user.id, user.token_version);
    if (data.tokenVersion < stored) throw new BizError(Code.SESSION_INVALIDATED, 'session invalidated, please log in again');
    return success(await issueTokensFor(services, user, data.impersonatorId));
  });
}
