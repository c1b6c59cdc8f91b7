import type { Logger } from '../../lib/log.js';

export type AuditAction =
  | 'cluster.create'
  | 'cluster.delete'
  | 'login.success'
  | 'login.failure'
  | 'login.rate_limited'
  | 'permission.denied'
  | 'impersonation.start'
  | 'impersonation.exit'
  | 'password.change'
  | 'password.change_refused'
  | 'profile.update'
  | 'cluster.switchover'
  | 'session.invalidate'
  | 'role.grants.emptied';

// Keys whose values never reach an audit record, whatever the caller passes.
const secretKey = /password|secret|authorization|captcha|^code$|token$/i;

/** Copies details with secret-looking keys replaced, one level deep into nested objects. */
export function sanitize(details: Record<string, unknown>, depth = 0): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(details)) {
    if (secretKey.test(key)) out[key] = '[redacted]';
    else if (value && typeof value === 'object' && !Array.isArray(value) && !(value instanceof Date) && depth < 2)
      out[key] = sanitize(value as Record<string, unknown>, depth + 1);
    else out[key] = value;
  }
  return out;
}

export interface Audit {
  record(action: AuditAction, level: 'info' | 'warn', details: Record<string, unknown>): void;
}

/** Audit entries are structured log records (logger name `audit`), not delivered events. */
export function createAudit(logger: Logger): Audit {
  const log = logger.child({ component: 'audit' });
  return {
    record(action, level, details) {
      log[level]({ audit: true, action, ...sanitize(details) }, `audit ${action}`);
    },
  };
}
