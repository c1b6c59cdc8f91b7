import { errors, jwtVerify, SignJWT } from 'jose';

export type TokenType = 'accessToken' | 'refreshToken';

/** The `data` claim: what the spec's token payload carries besides iat and exp. */
export interface TokenData {
  userId: number;
  userName: string;
  tokenType: TokenType;
  tokenVersion: number;
  impersonatorId: number;
}

export interface TokenPayload {
  iat: number;
  exp: number;
  data: TokenData;
}

export type VerifyResult = { ok: true; payload: TokenPayload } | { ok: false; reason: 'expired' | 'invalid' };

export interface TokenSettings {
  secretKey: string;
  algorithm: string;
  accessTokenMinutes: number;
  refreshTokenMinutes: number;
}

export interface TokenPair {
  token: string;
  refreshToken: string;
}

export interface TokenService {
  sign(data: TokenData, lifetimeSeconds?: number, now?: number): Promise<string>;
  issuePair(data: Omit<TokenData, 'tokenType'>): Promise<TokenPair>;
  verify(token: string): Promise<VerifyResult>;
}

function isTokenData(value: unknown): value is TokenData {
  if (!value || typeof value !== 'object') return false;
  const d = value as Record<string, unknown>;
  return (
    Number.isSafeInteger(d.userId) &&
    typeof d.userName === 'string' &&
    (d.tokenType === 'accessToken' || d.tokenType === 'refreshToken') &&
    Number.isSafeInteger(d.tokenVersion) &&
    (d.impersonatorId === undefined || Number.isSafeInteger(d.impersonatorId))
  );
}

export function createTokenService(settings: TokenSettings): TokenService {
  const key = new TextEncoder().encode(settings.secretKey);
  const alg = settings.algorithm;
  const lifetime = (type: TokenType): number => (type === 'accessToken' ? settings.accessTokenMinutes : settings.refreshTokenMinutes) * 60;

  const sign = async (data: TokenData, lifetimeSeconds = lifetime(data.tokenType), now = Math.floor(Date.now() / 1000)): Promise<string> =>
    new SignJWT({ data: { ...data, impersonatorId: data.impersonatorId ?? 0 } })
      .setProtectedHeader({ alg, typ: 'JWT' })
      .setIssuedAt(now)
      .setExpirationTime(now + lifetimeSeconds)
      .sign(key);

  // Verified tokens by their exact text: the same string needs its signature checked only once.
  // Expiry is still checked on every use; the map is bounded and simply cleared when full.
  const verified = new Map<string, TokenPayload>();
  const VERIFIED_MAX = 20_000;

  return {
    sign,
    async issuePair(data) {
      const [token, refreshToken] = await Promise.all([sign({ ...data, tokenType: 'accessToken' }), sign({ ...data, tokenType: 'refreshToken' })]);
      return { token, refreshToken };
    },
    async verify(token) {
      const known = verified.get(token);
      if (known) return known.exp <= Math.floor(Date.now() / 1000) ? { ok: false, reason: 'expired' } : { ok: true, payload: known };
      try {
        const { payload } = await jwtVerify(token, key, { algorithms: [alg], requiredClaims: ['exp', 'iat'] });
        if (!isTokenData(payload.data)) return { ok: false, reason: 'invalid' };
        const result: TokenPayload = {
          iat: payload.iat as number,
          exp: payload.exp as number,
          data: { ...payload.data, impersonatorId: payload.data.impersonatorId ?? 0 },
        };
        if (verified.size >= VERIFIED_MAX) verified.clear();
        verified.set(token, result);
        return { ok: true, payload: result };
      } catch (error) {
        return { ok: false, reason: error instanceof errors.JWTExpired ? 'expired' : 'invalid' };
      }
    },
  };
}
