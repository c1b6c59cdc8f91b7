import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import { PrincipalCache, userOfKey } from '../../../admin/auth/principal-cache.js';
import type { Principal } from '../../../admin/auth/principals.js';
import { ADMIN_PASSWORD, startHarness, until, type Harness } from '../support.js';

const principal = (id: number): Principal => ({
  user: {
    id,
    userName: `u${id}`,
    nickName: null,
    userGender: '3',
    userEmail: null,
    userPhone: null,
    lastLogin: null,
    statusType: '1',
    tokenVersion: 0,
    mustChangePassword: false,
  },
  roleCodes: ['R_ADMIN'],
  buttonCodes: [],
  grants: new Map(),
});

describe('in-process authorization cache (units)', () => {
  it('maps tracked keys to users; anything else concerns everyone', () => {
    assert.equal(userOfKey('token_version:42'), 42);
    assert.equal(userOfKey('authz:principal:7:42'), 42);
    assert.equal(userOfKey('authz:generation'), undefined);
  });

  it('does not keep a read that a change notice overtook', () => {
    const cache = new PrincipalCache();
    const early = cache.beginRead(1);
    cache.invalidate(['token_version:1']);
    assert.equal(cache.store(early, { version: '0', principal: principal(1) }), false, 'user 1 changed during the read');
    const other = cache.beginRead(2);
    cache.invalidate(['token_version:1']);
    assert.equal(cache.store(other, { version: '0', principal: principal(2) }), true, 'a change to user 1 does not concern user 2');
    const beforeFlush = cache.beginRead(3);
    cache.invalidate(['authz:generation']);
    assert.equal(cache.store(beforeFlush, { version: '0', principal: principal(3) }), false, 'a generation bump concerns everyone');
    assert.equal(cache.get(2), undefined, 'and dropped what was kept');
    const beforeLoss = cache.beginRead(4);
    cache.invalidate(null);
    assert.equal(cache.store(beforeLoss, { version: '0', principal: principal(4) }), false, 'lost tracking concerns everyone');
  });

  it('serves entries until they age out', () => {
    let now = 1_000;
    const cache = new PrincipalCache(5_000, 10, () => now);
    assert.ok(cache.store(cache.beginRead(1), { version: '3', principal: principal(1) }));
    now += 5_000;
    assert.equal(cache.get(1)?.version, '3');
    now += 1;
    assert.equal(cache.get(1), undefined);
  });
});

describe('in-process authorization cache (real Redis and PostgreSQL)', () => {
  let h: Harness;
  let outsider: Redis;
  let userId: number;
  let userToken: string;

  before(async () => {
    h = await startHarness();
    outsider = new Redis(h.redis.url, { maxRetriesPerRequest: 1 }).on('error', () => undefined);
    userId = await h.createUser('cache1', 'pass-123', ['R_ADMIN']);
    userToken = (await h.login('cache1', 'pass-123')).token;
  });
  after(async () => {
    outsider?.disconnect();
    await h?.stop();
  });

  const userInfo = (token = userToken) => h.call('GET', '/api/v1/auth/user-info', { token });
  const search = (token = userToken) => h.call<{ total: number }>('POST', '/api/v1/system-manage/users/search', { token, body: { current: 1, size: 10 } });
  /** Redis commands the admin ran while fn ran (INFO itself excluded). */
  const redisCommands = async (fn: () => Promise<void>): Promise<number> => {
    const calls = async (): Promise<number> => {
      const text = await outsider.info('commandstats');
      return [...text.matchAll(/cmdstat_(\w+):calls=(\d+)/g)].filter((m) => m[1] !== 'info').reduce((sum, m) => sum + Number(m[2]), 0);
    };
    const before = await calls();
    await fn();
    return (await calls()) - before;
  };
  /** Warm requests until one runs without touching Redis (the first reads fill the caches). */
  const warm = async (): Promise<void> => {
    await until('a request served without Redis', async () => (await redisCommands(async () => void (await userInfo()))) === 0);
  };

  it('a warm authenticated request costs no Redis round trip; users/search issues one SQL query', async () => {
    await warm();
    const used = await redisCommands(async () => {
      for (let i = 0; i < 10; i++) assert.equal((await userInfo()).code, '0000');
      for (let i = 0; i < 5; i++) assert.equal((await search()).code, '0000');
    });
    assert.equal(used, 0);
    const db = h.admin.services.db;
    const query = db.query;
    const texts: string[] = [];
    db.query = ((config: unknown, values?: unknown) => {
      texts.push(typeof config === 'string' ? config : (config as { text: string }).text);
      return (query as (c: unknown, v?: unknown) => Promise<unknown>).call(db, config, values);
    }) as typeof db.query;
    try {
      for (let i = 0; i < 5; i++) assert.ok((await search()).data.total > 0);
    } finally {
      db.query = query;
    }
    assert.equal(texts.length, 5, `one query per search, got: ${texts.join(' | ')}`);
    assert.doesNotMatch(texts[0], /"password"|"users"\.\*/, 'reads name their columns; password hashes stay in the database');
  });

  it('admin connections plan each named statement once (generic plans)', async () => {
    const { rows } = await h.admin.services.db.query<{ plan_cache_mode: string }>('SHOW plan_cache_mode');
    assert.equal(rows[0].plan_cache_mode, 'force_generic_plan');
  });

  it('honours a session version another client writes to Redis', async () => {
    await warm();
    await outsider.set(`token_version:${userId}`, '99');
    await until('the old token to be refused', async () => (await userInfo()).code === '2106', 2_000);
    await outsider.set(`token_version:${userId}`, '0');
    await until('the token to pass again', async () => (await userInfo()).code === '0000', 2_000);
  });

  it('honours a generation bump by another client (a write made by another replica)', async () => {
    await warm();
    await h.admin.services.db.query(`UPDATE users SET status_type = '2' WHERE id = $1`, [userId]);
    assert.equal((await userInfo()).code, '0000', 'served from cache until told otherwise, as with the Redis copy alone');
    await outsider.incr('authz:generation');
    await until('the disabled account to be refused', async () => (await userInfo()).code === '2102', 2_000);
    await h.sql(`UPDATE users SET status_type = '1' WHERE id = $1`, [userId]);
    assert.equal((await userInfo()).code, '0000', 'a write in this process takes effect on the next request');
  });

  it('tracks again after only the main Redis connection reconnects', async () => {
    await warm();
    const synced = () => h.logs.filter((l) => l.msg === 'session versions synced to redis').length;
    const syncsBefore = synced();
    h.admin.services.kv.redis.disconnect(true);
    // Each reconnection copies the database's versions into Redis; a write racing that copy is lost.
    await until('the client to reconnect and sync', () => h.admin.services.kv.isReady() && synced() > syncsBefore);
    await warm();
    await outsider.set(`token_version:${userId}`, '98');
    await until('the old token to be refused', async () => (await userInfo()).code === '2106', 2_000);
    await outsider.set(`token_version:${userId}`, '0');
    await until('the token to pass again', async () => (await userInfo()).code === '0000', 2_000);
  });

  it('drops the cache while Redis is away and tracks again after it returns', async () => {
    await warm();
    await h.redis.stopServer();
    await until('the client to notice', () => !h.admin.services.kv.isReady());
    await h.admin.services.db.query(`UPDATE users SET status_type = '2' WHERE id = $1`, [userId]);
    assert.equal((await userInfo()).code, '2102', 'read from the database, not from the dropped cache');
    await h.admin.services.db.query(`UPDATE users SET status_type = '1' WHERE id = $1`, [userId]);
    await h.redis.restart();
    await until('the client to reconnect', () => h.admin.services.kv.isReady());
    outsider.disconnect();
    outsider = new Redis(h.redis.url, { maxRetriesPerRequest: 1 }).on('error', () => undefined);
    await warm();
    await outsider.set(`token_version:${userId}`, '99');
    await until('the old token to be refused', async () => (await userInfo()).code === '2106', 2_000);
    assert.equal((await search((await h.login('admin', ADMIN_PASSWORD)).token)).code, '0000');
  });
});
