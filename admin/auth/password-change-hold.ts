/**
 * What a pending password change (`mustChangePassword`) holds back. Every supported client must
 * keep a way through: the current Soybean client has a password page (user center), the
 * spec-era one has none, only the user editor of User management. So by default (`writes`)
 * reading answers everywhere (GET and the POST searches: every page loads), changes wait with
 * 2108, and the password can be changed on any path: PATCH /auth/password, POST
 * /auth/reset-password, or the own user's record with a new password. `all` holds everything but
 * the password routes (for deployments whose every client has the page); `off` only reports it.
 */
import type { MountedRoute } from '../http/router.js';
import { AdminPaths } from '../../lib/ports.js';

export type PasswordChangeEnforcement = 'writes' | 'all' | 'off';

/** The route of the user editor's save (PATCH of one user). */
export const USER_UPDATE_TEMPLATE = `${AdminPaths.apiPrefix}/system-manage/users/{id}`;

/** A route that only reads: a GET, or the POST search of a resource. */
export function readsOnly(route: Pick<MountedRoute, 'method' | 'template'>): boolean {
  return route.method === 'get' || (route.method === 'post' && route.template.endsWith('/search'));
}

/** The user editor saving the caller's own record with a new password: a password change too. */
export function isOwnPasswordEdit(route: Pick<MountedRoute, 'method' | 'template'>, targetId: number | undefined, callerId: number, body: unknown): boolean {
  if (route.method !== 'patch' || route.template !== USER_UPDATE_TEMPLATE || targetId !== callerId) return false;
  const password = typeof body === 'object' && body !== null ? (body as Record<string, unknown>).password : undefined;
  return typeof password === 'string' && password.length > 0;
}

/** Whether the request waits for the password change (2108). */
export function heldForPasswordChange(
  mode: PasswordChangeEnforcement,
  route: Pick<MountedRoute, 'method' | 'template' | 'openDuringPasswordChange'>,
  ownPasswordEdit: boolean,
): boolean {
  if (mode === 'off' || route.openDuringPasswordChange || ownPasswordEdit) return false;
  return mode === 'all' || !readsOnly(route);
}
