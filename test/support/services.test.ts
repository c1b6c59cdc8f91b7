import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import { startPostgres, type TestPostgres } from './postgres.js';
import { startRedis, type TestRedis } from './redis.js';

describe('test PostgreSQL helper', () => {
  let db: TestPostgres;
  before(async () => {
    db = await startPostgres();
  });
  after(async () => {
    await db?.stop();
  });

  it('serves PostgreSQL 15 over TCP with password authentication', async () => {
    const { rows } = await db.query<{ v: string }>("select current_setting('server_version_num') as v");
    assert.match(rows[0].v, /^15\d{4}$/);
    await db.query('create table t (id int primary key)');
    await db.query('insert into t values ($1), ($2)', [1, 2]);
    const count = await db.query<{ n: number }>('select count(*)::int as n from t');
    assert.equal(count.rows[0].n, 2);
  });

  it('can be stopped and started again keeping its data', async () => {
    await db.stopServer();
    await assert.rejects(db.query('select 1'));
    await db.start();
    const count = await db.query<{ n: number }>('select count(*)::int as n from t');
    assert.equal(count.rows[0].n, 2);
  });
});

describe('test Redis helper', () => {
  let redis: TestRedis;
  before(async () => {
    redis = await startRedis();
  });
  after(async () => {
    await redis?.stop();
  });

  it('serves Redis on its port and survives a restart', async () => {
    const client = new Redis(redis.url, { lazyConnect: true, maxRetriesPerRequest: 1 });
    await client.connect();
    await client.set('k', 'v', 'EX', 60);
    assert.equal(await client.get('k'), 'v');
    client.disconnect();
    await redis.restart();
    const again = new Redis(redis.url, { lazyConnect: true, maxRetriesPerRequest: 1 });
    await again.connect();
    assert.equal(await again.ping(), 'PONG');
    assert.equal(await again.get('k'), null, 'no persistence: a restart starts empty');
    again.disconnect();
  });
});
