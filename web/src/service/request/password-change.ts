import type { Router } from 'vue-router';

/**
 * The admin answers 2108 while the signed-in user must change their password. Call this from the
 * request's onBackendFail (src/service/request/index.ts) before the toast:
 *   if (await routePasswordChange(response.data.code, router)) return null;
 * Codes come from VITE_SERVICE_PASSWORD_CHANGE_CODES (default 2108).
 */
export async function routePasswordChange(code: string, router: Router): Promise<boolean> {
  const codes = (import.meta.env.VITE_SERVICE_PASSWORD_CHANGE_CODES || '2108').split(',');
  if (!codes.includes(String(code))) return false;
  if (router.currentRoute.value.name !== 'user-center') {
    window.$message?.warning('Please change your password first / 请先修改密码');
    await router.push({ name: 'user-center' });
  }
  return true;
}
