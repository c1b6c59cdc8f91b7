import type { Logger } from '../../lib/log.js';
import { KvKeys, type Kv } from '../cache/kv.js';
import type { Queryable } from '../db/pool.js';
import type { PrincipalStore } from './principals.js';

/**
 * Session versions live in users.token_version (the durable copy) and in Redis
 * `token_version:{userId}` (what requests are checked against).
 */
export interface Sessions {
  /** Bumps the version so every token issued before now fails with 2106. Returns the new version. */
  invalidate(userIds: number[]): Promise<void>;
  /** The version to put into new tokens: the stored value, 0 when absent. */
  currentVersion(userId: number, databaseVersion: number): Promise<number>;
  /** Copies every user's version into Redis (start-up and after each reconnect). */
  syncToKv(): Promise<void>;
}

export function createSessions(db: Queryable, kv: Kv, principals: PrincipalStore, logger: Logger): Sessions {
  return {
    async invalidate(userIds) {
      if (userIds.length === 0) return;
      const { rows } = await db.query<{ id: number; token_version: number }>(
        'UPDATE users SET token_version = token_version + 1 WHERE id = ANY($1) RETURNING id, token_version',
        [userIds],
      );
      try {
        await kv.run((r) => {
          const pipeline = r.pipeline();
          for (const row of rows) pipeline.set(KvKeys.tokenVersion(row.id), String(row.token_version));
          return pipeline.exec();
        });
      } catch (error) {
        // The database holds the new version; syncToKv copies it when Redis comes back.
        logger.warn({ err: (error as Error).message, userIds }, 'session version not written to redis; it is synced on reconnect');
      }
      await principals.invalidateAll();
    },
    async currentVersion(userId, databaseVersion) {
      try {
        const stored = await kv.run((r) => r.get(KvKeys.tokenVersion(userId)));
        return Math.max(stored === null ? 0 : Number(stored), databaseVersion);
      } catch {
        return databaseVersion;
      }
    },
    async syncToKv() {
      const { rows } = await db.query<{ id: number; token_version: number }>('SELECT id, token_version FROM users');
      await kv.run((r) => {
        const pipeline = r.pipeline();
        for (const row of rows) pipeline.set(KvKeys.tokenVersion(row.id), String(row.token_version));
        // Writes made while Redis was away did not bump the cache generation; do it now.
        pipeline.incr(KvKeys.authzGeneration);
        return pipeline.exec();
      });
      logger.info({ users: rows.length }, 'session versions synced to redis');
    },
  };
}
