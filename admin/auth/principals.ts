import type { Logger } from '../../lib/log.js';
import { evalScript, KvKeys, KvUnavailableError, type Kv } from '../cache/kv.js';
import type { KeyTracker } from '../cache/tracking.js';
import type { ContextUser } from '../http/context.js';
import { SUPER_ROLE } from '../http/context.js';
import { poolGrants } from './permissions.js';
import type { Queryable } from '../db/pool.js';
import { PrincipalCache, type CachedAuthz, type Principal } from './principal-cache.js';

/** Everything an authenticated request needs about its user, loadable in one cache read. */
export type { Principal } from './principal-cache.js';

interface CachedPrincipal {
  user: Omit<ContextUser, 'lastLogin'> & { lastLogin: string | null };
  roleCodes: string[];
  buttonCodes: string[];
  grants: [string, string][];
}

export interface PrincipalLookup {
  principal: Principal | undefined;
  /** Stored session version; undefined when the key-value store could not be asked. */
  storedVersion: number | undefined;
  kvDown: boolean;
}

export interface UserRow {
  id: number;
  user_name: string;
  password: string;
  nick_name: string | null;
  user_gender: string;
  user_email: string | null;
  user_phone: string | null;
  last_login: Date | null;
  status_type: string;
  token_version: number;
  must_change_password: boolean;
}

export function toContextUser(row: UserRow): ContextUser {
  return {
    id: row.id,
    userName: row.user_name,
    nickName: row.nick_name,
    userGender: row.user_gender,
    userEmail: row.user_email,
    userPhone: row.user_phone,
    lastLogin: row.last_login,
    statusType: row.status_type,
    tokenVersion: row.token_version,
    mustChangePassword: row.must_change_password,
  };
}

/** Reads the user, their enabled roles, buttons and API grants from PostgreSQL. */
export async function loadPrincipalFromDb(db: Queryable, userId: number): Promise<Principal | undefined> {
  const users = await db.query<UserRow>('SELECT * FROM users WHERE id = $1', [userId]);
  if (users.rowCount === 0) return undefined;
  const roles = await db.query<{ id: number; role_code: string }>(
    `SELECT r.id, r.role_code FROM roles r JOIN user_roles ur ON ur.role_id = r.id
     WHERE ur.user_id = $1 AND r.status_type = '1' ORDER BY r.created_at DESC, r.id DESC`,
    [userId],
  );
  const roleCodes = roles.rows.map((r) => r.role_code);
  const roleIds = roles.rows.map((r) => r.id);
  const isSuper = roleCodes.includes(SUPER_ROLE);
  const buttons = await db.query<{ button_code: string }>(
    isSuper
      ? `SELECT button_code FROM buttons ORDER BY id`
      : `SELECT DISTINCT b.button_code FROM buttons b JOIN role_buttons rb ON rb.button_id = b.id WHERE rb.role_id = ANY($1) ORDER BY b.button_code`,
    isSuper ? [] : [roleIds],
  );
  const apis = isSuper
    ? { rows: [] }
    : await db.query<{ api_method: string; api_path: string; status_type: string }>(
        `SELECT a.api_method, a.api_path, a.status_type FROM apis a JOIN role_apis ra ON ra.api_id = a.id WHERE ra.role_id = ANY($1)`,
        [roleIds],
      );
  return {
    user: toContextUser(users.rows[0]),
    roleCodes,
    buttonCodes: buttons.rows.map((b) => b.button_code),
    grants: poolGrants(apis.rows.map((a) => ({ method: a.api_method, path: a.api_path, status: a.status_type }))),
  };
}

const serialize = (p: Principal): string =>
  JSON.stringify({
    user: { ...p.user, lastLogin: p.user.lastLogin?.toISOString() ?? null },
    roleCodes: p.roleCodes,
    buttonCodes: p.buttonCodes,
    grants: [...p.grants],
  } satisfies CachedPrincipal);

const deserialize = (text: string): Principal => {
  const c = JSON.parse(text) as CachedPrincipal;
  return {
    user: { ...c.user, lastLogin: c.user.lastLogin ? new Date(c.user.lastLogin) : null },
    roleCodes: c.roleCodes,
    buttonCodes: c.buttonCodes,
    grants: new Map(c.grants),
  };
};

// One round trip: the stored session version, the authz generation and the cached principal.
const lookupScript = `
local v = redis.call('GET', KEYS[1])
local g = redis.call('GET', KEYS[2]) or '0'
local p = redis.call('GET', 'authz:principal:' .. g .. ':' .. ARGV[1])
return {v or false, g, p or false}`;

const PRINCIPAL_TTL_SECONDS = 300;

export interface PrincipalStore {
  lookup(userId: number): Promise<PrincipalLookup>;
  /** Call after any write that can change a user's status, roles, buttons or grants. */
  invalidateAll(): Promise<void>;
  /** Drops one user's cached principal (for example after login updated last_login). */
  forget(userId: number): Promise<void>;
  /** Stops the key tracker the store was given. */
  close(): Promise<void>;
}

/** The Redis keys whose changes the in-process cache must hear about. */
export const trackedKeyPrefixes = [KvKeys.tokenVersion(0).slice(0, -1), 'authz:'] as const;

const forgetScript = `
local g = redis.call('GET', KEYS[1]) or '0'
return redis.call('DEL', 'authz:principal:' .. g .. ':' .. ARGV[1])`;

/** The lookup result for what Redis (or its in-process copy) holds. */
function fromKv(version: string | null, principal: Principal | undefined): PrincipalLookup {
  // An absent key means 0, but the database copy guards against a Redis that lost its data.
  const stored = Math.max(version === null ? 0 : Number(version), principal?.user.tokenVersion ?? 0);
  return { principal, storedVersion: stored, kvDown: false };
}

/**
 * Principals are cached in Redis under a generation number; any write bumps the generation, so
 * stale entries are simply never read again (and expire). When Redis is down the database answers.
 * With a key tracker, what one lookup read from Redis is also kept in process memory until Redis
 * reports a change to one of those keys, so a warm request costs no Redis round trip (ADR 0205).
 */
export function createPrincipalStore(db: Queryable, kv: Kv, logger: Logger, tracker?: KeyTracker): PrincipalStore {
  const local = new PrincipalCache();
  tracker?.onInvalidate((keys) => local.invalidate(keys));
  return {
    async lookup(userId) {
      if (tracker?.isActive()) {
        const hit: CachedAuthz | undefined = local.get(userId);
        if (hit) return fromKv(hit.version, hit.principal);
      }
      const ticket = local.beginRead(userId);
      let reply: [string | null, string, string | null];
      try {
        reply = (await kv.run((r) => evalScript(r, lookupScript, [KvKeys.tokenVersion(userId), KvKeys.authzGeneration], [String(userId)]))) as [
          string | null,
          string,
          string | null,
        ];
      } catch (error) {
        if (!(error instanceof KvUnavailableError)) throw error;
        return { principal: await loadPrincipalFromDb(db, userId), storedVersion: undefined, kvDown: true };
      }
      const [version, generation, cached] = reply;
      let principal = cached ? deserialize(cached) : undefined;
      if (principal) {
        // Only what Redis held is kept locally; a principal loaded below is kept from the next read.
        if (tracker?.isActive()) local.store(ticket, { version, principal });
      } else {
        principal = await loadPrincipalFromDb(db, userId);
        if (principal) {
          const text = serialize(principal);
          await kv
            .run((r) => r.set(KvKeys.principal(generation, userId), text, 'EX', PRINCIPAL_TTL_SECONDS))
            .catch((e: Error) => logger.debug({ err: e.message }, 'principal cache write failed'));
        }
      }
      return fromKv(version, principal);
    },
    async forget(userId) {
      local.forget(userId);
      await kv.run((r) => evalScript(r, forgetScript, [KvKeys.authzGeneration], [String(userId)])).catch(() => undefined);
    },
    async invalidateAll() {
      local.clear();
      await kv
        .run((r) => r.incr(KvKeys.authzGeneration))
        .catch((e: Error) => logger.warn({ err: e.message }, 'could not bump authz generation; cached permissions expire within 5 minutes'));
    },
    async close() {
      await tracker?.close();
    },
  };
}
