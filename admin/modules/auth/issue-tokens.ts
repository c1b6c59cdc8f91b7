import type { TokenPair } from '../../auth/tokens.js';
import type { AdminServices } from '../../services.js';

/** Issues an access and a refresh token carrying the user's current session version. */
export async function issueTokensFor(
  services: AdminServices,
  user: { id: number; user_name: string; token_version: number },
  impersonatorId = 0,
): Promise<TokenPair> {
  const tokenVersion = await services.sessions.currentVersion(user.id, user.token_version);
  return services.tokens.issuePair({ userId: user.id, userName: user.user_name, tokenVersion, impersonatorId });
}
