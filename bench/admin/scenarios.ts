import type { Targets } from './servers.js';
import { benchPassword } from './servers.js';

export interface Scenario {
  name: string;
  /** autocannon options (url, method, headers, body, connections). */
  options: Record<string, unknown>;
  /** Whether the read target applies. */
  targeted: boolean;
}

/** The bare handler first (the base of every ratio), then the admin scenarios. */
export function scenarios(t: Targets): Scenario[] {
  const json = { 'content-type': 'application/json' };
  const search = (token: string) => ({
    url: `${t.admin}/api/v1/system-manage/users/search`,
    method: 'POST',
    headers: { ...json, authorization: `Bearer ${token}` },
    body: JSON.stringify({ current: 1, size: 10 }),
  });
  return [
    { name: 'bare express handler', options: { url: `${t.bare}/bare` }, targeted: false },
    {
      name: 'GET /auth/user-info (R_ADMIN token)',
      options: { url: `${t.admin}/api/v1/auth/user-info`, headers: { authorization: `Bearer ${t.userToken}` } },
      targeted: true,
    },
    { name: 'POST /system-manage/users/search (R_ADMIN, API permission)', options: search(t.userToken), targeted: true },
    { name: 'POST /system-manage/users/search (R_SUPER)', options: search(t.superToken), targeted: true },
    // Login is argon2-bound (4 libuv threads); 8 connections keep the queue short enough to measure latency.
    {
      name: 'POST /auth/login (argon2id defaults, 8 connections)',
      options: {
        url: `${t.admin}/api/v1/auth/login`,
        method: 'POST',
        headers: json,
        body: JSON.stringify({ userName: 'bench-admin', password: benchPassword }),
        connections: 8,
      },
      targeted: false,
    },
  ];
}
