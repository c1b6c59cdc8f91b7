import { createHash } from 'node:crypto';
import { Redis } from 'ioredis';
import type { Logger } from '../../lib/log.js';

/** Raised when Redis cannot answer; callers decide whether to degrade or fail. */
export class KvUnavailableError extends Error {
  constructor(cause: unknown) {
    super(`key-value store unavailable: ${cause instanceof Error ? cause.message : String(cause)}`);
    this.name = 'KvUnavailableError';
  }
}

export interface Kv {
  readonly redis: Redis;
  /** True while the connection is up; commands fail fast otherwise. */
  isReady(): boolean;
  /** Runs a command; any failure (down, timeout) becomes KvUnavailableError. */
  run<T>(command: (redis: Redis) => Promise<T>): Promise<T>;
  /** Called every time the connection becomes ready (first connect and each reconnect). */
  onReady(listener: () => void): void;
  close(): Promise<void>;
}

/**
 * A Redis client that fails fast instead of queueing while disconnected (no offline queue, no
 * per-request retries, a command timeout) and keeps reconnecting in the background, so an outage
 * costs requests milliseconds, not hangs.
 */
export function createKv(url: string, logger: Logger, timeoutMs = 500): Kv {
  const redis = new Redis(url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: timeoutMs,
    connectTimeout: Math.max(timeoutMs, 1000),
    retryStrategy: (attempt) => Math.min(attempt * 200, 2000),
    lazyConnect: false,
  });
  let lastErrorLog = 0;
  redis.on('error', (error: Error) => {
    // Reconnect attempts raise an error each time; log at most one line every 10 s.
    const now = Date.now();
    if (now - lastErrorLog > 10_000) {
      lastErrorLog = now;
      logger.warn({ err: error.message }, 'redis error');
    }
  });
  redis.on('ready', () => logger.info('redis ready'));
  return {
    redis,
    isReady: () => redis.status === 'ready',
    async run(command) {
      if (redis.status !== 'ready') throw new KvUnavailableError(`status ${redis.status}`);
      try {
        return await command(redis);
      } catch (error) {
        throw new KvUnavailableError(error);
      }
    },
    onReady(listener) {
      redis.on('ready', listener);
    },
    async close() {
      redis.removeAllListeners('ready');
      try {
        await redis.quit();
      } catch {
        redis.disconnect();
      }
    },
  };
}

/** Keys held in Redis, in one place so every writer and reader agree. */
export const KvKeys = {
  tokenVersion: (userId: number) => `token_version:${userId}`,
  captcha: (phone: string) => `captcha:${phone}`,
  constantRoutes: 'constant_routes',
  dictOptions: (type: string) => `dict_options:${type}`,
  /** Bumped on every change that can alter anyone's roles, buttons or API grants. */
  authzGeneration: 'authz:generation',
  principal: (generation: string, userId: number) => `authz:principal:${generation}:${userId}`,
} as const;

const scriptShas = new Map<string, string>();

/** Runs a Lua script by its SHA (EVALSHA), loading it with EVAL only when Redis does not know it. */
export async function evalScript(redis: Redis, script: string, keys: string[], args: string[]): Promise<unknown> {
  let sha = scriptShas.get(script);
  if (!sha) {
    sha = createHash('sha1').update(script).digest('hex');
    scriptShas.set(script, sha);
  }
  try {
    return await redis.evalsha(sha, keys.length, ...keys, ...args);
  } catch (error) {
    if (!(error instanceof Error) || !error.message.includes('NOSCRIPT')) throw error;
    return redis.eval(script, keys.length, ...keys, ...args);
  }
}
