import { Code } from '../http/codes.js';
import { SUPER_ROLE } from '../http/context.js';

/** Permission key: lower-case method and the route template the router matched. */
export const apiKey = (method: string, template: string): string => `${method.toLowerCase()} ${template}`;

export interface Denial {
  code: string;
  msg: string;
}

/**
 * The API permission check (spec check 8). `grants` pools the triples of all the user's enabled
 * roles: key → '1' (enable) or '2' (disable); `knownApis` says whether the template is an API route.
 */
export function checkApiPermission(roleCodes: readonly string[], grants: ReadonlyMap<string, string>, method: string, template: string): Denial | undefined {
  if (roleCodes.includes(SUPER_ROLE)) return undefined;
  if (roleCodes.length === 0) return { code: Code.USER_NO_ROLE, msg: 'user has no role' };
  const status = grants.get(apiKey(method, template));
  if (status === '1') return undefined;
  if (status === undefined) return { code: Code.PERMISSION_DENIED, msg: `permission denied, method: ${method.toLowerCase()} path: ${template}` };
  return { code: Code.API_DISABLED, msg: `this API is disabled, method: ${method.toLowerCase()} path: ${template}` };
}

/** Pools permission triples: when one API appears with both statuses, enable wins. */
export function poolGrants(triples: Iterable<{ method: string; path: string; status: string }>): Map<string, string> {
  const pooled = new Map<string, string>();
  for (const t of triples) {
    const key = apiKey(t.method, t.path);
    if (pooled.get(key) !== '1') pooled.set(key, t.status === '1' ? '1' : '2');
  }
  return pooled;
}

/** require_buttons: any-of by default (2203), all-of with requireAll (2202); R_SUPER passes. */
export function checkButtons(roleCodes: readonly string[], held: readonly string[], codes: readonly string[], requireAll = false): Denial | undefined {
  if (roleCodes.includes(SUPER_ROLE) || codes.length === 0) return undefined;
  if (requireAll) {
    const missing = codes.filter((c) => !held.includes(c));
    return missing.length ? { code: Code.MISSING_BUTTON_PERMISSION, msg: `missing button permission: ${missing.join(', ')}` } : undefined;
  }
  return codes.some((c) => held.includes(c))
    ? undefined
    : { code: Code.NEED_ANY_BUTTON_PERMISSION, msg: `one of these button permissions is required: ${codes.join(', ')}` };
}

/** require_roles: any-of by default (2205), all-of with requireAll (2204); R_SUPER passes. */
export function checkRoles(roleCodes: readonly string[], codes: readonly string[], requireAll = false): Denial | undefined {
  if (roleCodes.includes(SUPER_ROLE) || codes.length === 0) return undefined;
  if (requireAll) {
    const missing = codes.filter((c) => !roleCodes.includes(c));
    return missing.length ? { code: Code.MISSING_ROLE, msg: `missing role: ${missing.join(', ')}` } : undefined;
  }
  return codes.some((c) => roleCodes.includes(c)) ? undefined : { code: Code.NEED_ANY_ROLE, msg: `one of these roles is required: ${codes.join(', ')}` };
}
