import type { Logger } from '../../lib/log.js';
import { Code } from '../http/codes.js';
import type { RequestContextValues } from '../http/context.js';
import { BizError } from '../http/envelope.js';
import type { TokenService } from './tokens.js';
import type { PrincipalStore, Principal } from './principals.js';

/** Reads `Authorization: Bearer <token>`; anything else counts as missing. */
export function bearerToken(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match?.[1];
}

export interface Authenticator {
  /** Runs the spec's check order (2100, 2103, 2101, 2101, 2102, 2106) and fills the context. */
  authenticate(authorization: string | undefined, ctx: RequestContextValues): Promise<Principal>;
}

export function createAuthenticator(tokens: TokenService, principals: PrincipalStore, logger: Logger): Authenticator {
  let skippedSince = 0;
  let skipped = 0;
  const warnSkipped = (userId: number): void => {
    // One warning per second at most: an outage must not turn into a log flood.
    skipped++;
    const now = Date.now();
    if (now - skippedSince >= 1000) {
      logger.warn({ userId, skippedChecks: skipped }, 'key-value store unavailable: session version check skipped, roles loaded from the database');
      skippedSince = now;
      skipped = 0;
    }
  };
  return {
    async authenticate(authorization, ctx) {
      const token = bearerToken(authorization);
      if (!token) throw new BizError(Code.INVALID_TOKEN, 'authentication failed: no bearer token in the request');
      const verified = await tokens.verify(token);
      if (!verified.ok) {
        if (verified.reason === 'expired') throw new BizError(Code.TOKEN_EXPIRED, 'login expired');
        throw new BizError(Code.INVALID_TOKEN, 'invalid token');
      }
      const data = verified.payload.data;
      if (data.tokenType !== 'accessToken') throw new BizError(Code.INVALID_SESSION, 'this token is not an access token');
      const { principal, storedVersion, kvDown } = await principals.lookup(data.userId);
      if (!principal) throw new BizError(Code.INVALID_SESSION, `authentication failed: user ${data.userId} does not exist`);
      if (principal.user.statusType !== '1') throw new BizError(Code.ACCOUNT_DISABLED, 'this account is disabled');
      if (kvDown) warnSkipped(data.userId);
      else if (storedVersion !== undefined && data.tokenVersion < storedVersion)
        throw new BizError(Code.SESSION_INVALIDATED, 'session invalidated, please log in again');
      ctx.CTX_USER_ID = principal.user.id;
      ctx.CTX_USER = principal.user;
      ctx.CTX_ROLE_CODES = principal.roleCodes;
      ctx.CTX_BUTTON_CODES = principal.buttonCodes;
      ctx.CTX_IMPERSONATOR_ID = data.impersonatorId > 0 ? data.impersonatorId : undefined;
      return principal;
    },
  };
}
