import { Redis } from 'ioredis';
import type { Logger } from '../../lib/log.js';
import type { Kv } from './kv.js';

const INVALIDATE_CHANNEL = '__redis__:invalidate';

/** Keys Redis reported as changed; `null` means everything (FLUSHALL, or tracking was lost). */
export type InvalidatedKeys = string[] | null;

export interface KeyTracker {
  /**
   * True while Redis is known to report every change under the tracked prefixes to us, so values
   * read earlier may be served from process memory. False while either connection is down or
   * tracking is being (re-)established.
   */
  isActive(): boolean;
  /** Called for every invalidation, and with `null` whenever tracking stops or restarts. */
  onInvalidate(listener: (keys: InvalidatedKeys) => void): void;
  close(): Promise<void>;
}

/**
 * Server-assisted client-side caching (Redis CLIENT TRACKING, RESP2 redirect mode, broadcasting):
 * a second connection subscribes to `__redis__:invalidate` and the main connection asks Redis to
 * send it the name of every key under `prefixes` that anyone modifies. Each (re)connection of
 * either side restarts tracking, and everything cached before is dropped, because messages may
 * have been lost while a connection was away.
 */
export function createKeyTracker(url: string, kv: Kv, prefixes: readonly string[], logger: Logger): KeyTracker {
  const listeners: ((keys: InvalidatedKeys) => void)[] = [];
  const emit = (keys: InvalidatedKeys): void => listeners.forEach((listener) => listener(keys));
  const subscriber = new Redis(url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    autoResubscribe: false, // the client id changes on reconnect; establish() subscribes again
    // RESP2: Redis then sends invalidations as Pub/Sub messages; ioredis drops RESP3 'invalidate' pushes.
    protocol: 2,
    connectTimeout: 1000,
    retryStrategy: (attempt) => Math.min(attempt * 200, 2000),
  });
  subscriber.on('error', () => undefined); // the main connection logs Redis trouble already
  let active = false;
  let attempt = 0;
  let closed = false;
  // The subscriber's client id while it stays subscribed: once subscribed it cannot run CLIENT ID,
  // so a reconnect of the main connection alone reuses it.
  let subscriberId: number | undefined;
  subscriber.on('close', () => (subscriberId = undefined));

  const stop = (): void => {
    attempt++;
    if (active) logger.debug('redis key tracking stopped; in-process cache dropped');
    active = false;
    emit(null);
  };

  const establish = async (): Promise<void> => {
    stop();
    const mine = attempt;
    if (closed || kv.redis.status !== 'ready' || subscriber.status !== 'ready') return;
    try {
      if (subscriberId === undefined) {
        const id = (await subscriber.client('ID')) as number;
        await subscriber.subscribe(INVALIDATE_CHANNEL);
        subscriberId = id;
      }
      await kv.redis.call('CLIENT', 'TRACKING', 'OFF');
      await kv.redis.call('CLIENT', 'TRACKING', 'ON', 'REDIRECT', String(subscriberId), 'BCAST', ...prefixes.flatMap((p) => ['PREFIX', p]));
    } catch (error) {
      logger.warn({ err: (error as Error).message }, 'redis key tracking not enabled; requests read Redis every time');
      return;
    }
    if (mine !== attempt || kv.redis.status !== 'ready' || subscriber.status !== 'ready') return;
    emit(null);
    active = true;
  };

  subscriber.on('messageBuffer', (channel: Buffer, message: unknown) => {
    if (channel.toString() !== INVALIDATE_CHANNEL) return;
    emit(Array.isArray(message) ? message.map((key: Buffer) => key.toString()) : null);
  });
  for (const connection of [kv.redis, subscriber]) {
    connection.on('ready', () => void establish());
    connection.on('close', stop);
  }
  void establish();

  return {
    isActive: () => active && kv.redis.status === 'ready' && subscriber.status === 'ready',
    onInvalidate: (listener) => void listeners.push(listener),
    async close() {
      closed = true;
      stop();
      subscriber.removeAllListeners('ready');
      subscriber.disconnect();
    },
  };
}
