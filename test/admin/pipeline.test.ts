import assert from 'node:assert/strict';
import { Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { createPool, prepared, withTransaction, type Db } from '../../admin/db/pool.js';
import { startPostgres, type TestPostgres } from '../support/postgres.js';

/** Counts socket writes that reach the kernel (one `_write`/`_writev` each) towards one port. */
function countWrites(port: number): { count(): number; restore(): void } {
  const proto = Socket.prototype as unknown as Record<'_write' | '_writev', (this: Socket, ...args: unknown[]) => unknown>;
  const original = { _write: proto._write, _writev: proto._writev };
  let writes = 0;
  for (const name of ['_write', '_writev'] as const) {
    proto[name] = function (this: Socket, ...args: unknown[]) {
      if (this.remotePort === port) writes++;
      return original[name].apply(this, args);
    };
  }
  return {
    count: () => writes,
    restore: () => Object.assign(proto, original),
  };
}

// Single statements go over pipelined connections with one write per event-loop turn (ADR 0207).
describe('admin pipelined statements', () => {
  let pg: TestPostgres;
  let db: Db;

  before(async () => {
    pg = await startPostgres();
    db = createPool(pg.url, { max: 2, pipelineConnections: 2 });
    await db.query('SELECT 1');
  });
  after(async () => {
    await db?.end();
    await pg?.stop();
  });

  it('statements issued in one turn leave in one write per connection, each with its own result', async () => {
    await Promise.all([db.query('SELECT 1'), db.query('SELECT 1')]); // both connections open
    const writes = countWrites(pg.port);
    try {
      const results = await Promise.all(Array.from({ length: 40 }, (_, i) => db.query(prepared('SELECT $1::int * 2 AS doubled', [i]))));
      assert.deepEqual(
        results.map((r) => r.rows[0].doubled),
        Array.from({ length: 40 }, (_, i) => i * 2),
      );
      assert.equal(writes.count(), 2, '40 statements, two connections, one write each');
    } finally {
      writes.restore();
    }
  });

  it('a failing statement fails alone; the others in the same write succeed', async () => {
    const settled = await Promise.allSettled([0, 1, 2, 0, 4].map((n) => db.query('SELECT 8 / $1::int AS q', [n])));
    assert.deepEqual(
      settled.map((s) => (s.status === 'fulfilled' ? s.value.rows[0].q : (s.reason as { code?: string }).code)),
      ['22012', 8, 4, '22012', 2],
    );
    assert.equal((await db.query(prepared('SELECT $1::text AS t', ['after']))).rows[0].t, 'after');
  });

  it('transactions run on pooled connections, apart from the pipeline', async () => {
    await db.query('CREATE TABLE IF NOT EXISTS pipeline_probe (n int)');
    const seen = await withTransaction(db, async (client) => {
      await client.query('INSERT INTO pipeline_probe VALUES (1)');
      const inside = (await client.query('SELECT count(*)::int AS n FROM pipeline_probe')).rows[0].n as number;
      const outside = (await db.query('SELECT count(*)::int AS n FROM pipeline_probe')).rows[0].n as number;
      return { inside, outside };
    });
    assert.deepEqual(seen, { inside: 1, outside: 0 }, 'the uncommitted row is not visible to pipelined reads');
    assert.equal((await db.query('SELECT count(*)::int AS n FROM pipeline_probe')).rows[0].n, 1);
  });

  it('reconnects after its backends are terminated', async () => {
    const killer = await db.connect();
    try {
      await killer.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE pid <> pg_backend_pid() AND datname = current_database()');
    } finally {
      killer.release();
    }
    let answer: number | undefined;
    for (let attempt = 0; attempt < 20 && answer === undefined; attempt++) {
      answer = await db.query('SELECT 42 AS n').then(
        (r) => r.rows[0].n as number,
        () => new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), 50)),
      );
    }
    assert.equal(answer, 42);
    const both = await Promise.all([db.query('SELECT 1 AS n'), db.query('SELECT 2 AS n'), db.query('SELECT 3 AS n')]);
    assert.deepEqual(
      both.map((r) => r.rows[0].n),
      [1, 2, 3],
    );
  });

  it('refuses statements once ended', async () => {
    const ended = createPool(pg.url, { max: 1, pipelineConnections: 1 });
    assert.equal((await ended.query('SELECT 1 AS n')).rows[0].n, 1);
    await ended.end();
    await assert.rejects(ended.query('SELECT 1'), /ended/);
  });
});
