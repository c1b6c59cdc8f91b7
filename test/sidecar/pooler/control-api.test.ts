import assert from 'node:assert/strict';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { PoolerPaths } from '../../../lib/ports.js';
import { startTestExporter } from '../exporter/helpers.js';
import { poolerPasswordFile, scratchDir, startTestPooler, type TestPooler } from './support.js';

/**
 * The control API of a real `keelson pooler` (PgBouncer running, no PostgreSQL needed): it asks
 * for the credentials, refuses bad bodies naming the field, pauses PgBouncer for real, and a
 * pause nobody ends expires on its own.
 */
const credentials = { username: 'keelson', password: 'control-secret' };
const authorization = `Basic ${Buffer.from(`${credentials.username}:${credentials.password}`).toString('base64')}`;

describe('keelson pooler control API', { timeout: 60_000 }, () => {
  let pooler: TestPooler;
  const dir = scratchDir();

  before(async () => {
    // Nothing listens on the target: PgBouncer starts without its server.
    pooler = await startTestPooler({ baseDir: dir, target: { host: '127.0.0.1', port: 1 }, passwordFile: poolerPasswordFile(dir, 'unused'), credentials });
  });

  after(async () => {
    await pooler?.running.close();
    rmSync(dir, { recursive: true, force: true });
  });

  function call(path: string, body?: unknown, auth = authorization): Promise<Response> {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (auth) headers.authorization = auth;
    return fetch(`${pooler.running.controlUrl}${path}`, {
      method: body === undefined ? 'GET' : 'POST',
      headers,
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
  }

  it('says in /state and /metrics that its PostgreSQL cannot be reached', async () => {
    const state = (await (await call(PoolerPaths.state)).json()) as { reachable?: unknown };
    assert.equal(state.reachable, false);
    const metrics = await call(PoolerPaths.metrics, undefined, '');
    assert.equal(metrics.status, 200, 'scraped without credentials');
    const text = await metrics.text();
    assert.match(text, /^keelson_pooler_target_reachable 0$/m);
    assert.match(text, /^keelson_pooler_paused 0$/m);
  });

  it('PgBouncer is scraped by the exporter on its admin console, as the pooler role (SHOW only)', async () => {
    const exporter = await startTestExporter({
      url: `postgresql://keelson_pooler:unused@127.0.0.1:${pooler.port}/pgbouncer?sslmode=disable`,
      'disable-cache': 'true',
    });
    try {
      const text = await (await fetch(`${exporter.url}/metrics`)).text();
      assert.match(text, /^pgbouncer_list_items\{[^}]*list="databases"[^}]*\} \d+/m, text.slice(0, 2000));
      assert.match(text, /^pgbouncer_database_pool_size\{[^}]*datname="pgbouncer"/m);
      assert.match(text, /^pgbouncer_pool_waiting_clients\{/m);
    } finally {
      await exporter.close();
    }
    // The role may look, not act.
    const { default: pg } = await import('pg');
    const console_ = new pg.Client({ host: '127.0.0.1', port: pooler.port, user: 'keelson_pooler', password: 'unused', database: 'pgbouncer' });
    await console_.connect();
    try {
      await assert.rejects(console_.query('PAUSE'), /admin access needed|not allowed/i);
    } finally {
      await console_.end();
    }
  });

  it('answers /healthz without credentials and nothing else', async () => {
    assert.equal((await call(PoolerPaths.healthz, undefined, '')).status, 200);
    assert.equal((await call(PoolerPaths.state, undefined, '')).status, 401);
    assert.equal((await call(PoolerPaths.pause, { timeoutMs: 100, holdMs: 100 }, 'Basic a2VlbHNvbjp3cm9uZw==')).status, 401);
    assert.equal((await pooler.running.control.state()).paused, false, 'a refused call paused nothing');
  });

  it('refuses bad bodies with 400 naming the field, and oversized ones with 413', async () => {
    const bad = await call(PoolerPaths.pause, { timeoutMs: -1, holdMs: 1000 });
    assert.equal(bad.status, 400);
    assert.match(((await bad.json()) as { error: string }).error, /timeoutMs/);
    const extra = await call(PoolerPaths.target, { host: 'h', port: 5432, evil: true });
    assert.equal(extra.status, 400);
    assert.match(((await extra.json()) as { error: string }).error, /evil/);
    const injected = await call(PoolerPaths.target, { host: 'h\nauth_type = trust', port: 5432 });
    assert.equal(injected.status, 400);
    assert.match(((await injected.json()) as { error: string }).error, /host/);
    assert.equal((await call(PoolerPaths.pause, 'not json')).status, 400);
    assert.equal((await call(PoolerPaths.target, { host: 'x'.repeat(5000), port: 1 })).status, 413);
    assert.deepEqual((await pooler.running.control.state()).target, { host: '127.0.0.1', port: 1 }, 'nothing changed');
  });

  it('pauses PgBouncer for real, retargets it with a RELOAD, and resumes', async () => {
    const paused = await call(PoolerPaths.pause, { timeoutMs: 2000, holdMs: 30_000 });
    assert.equal(paused.status, 200);
    // PgBouncer itself refuses a second PAUSE while paused: proof that the first one took effect.
    await assert.rejects(pooler.running.admin.command('PAUSE'), /already/i);
    assert.equal((await call(PoolerPaths.target, { host: '127.0.0.9', port: 6543 })).status, 200);
    const ini = readFileSync(join(dir, `pgbouncer-${pooler.port}`, 'pgbouncer.ini'), 'utf8');
    assert.match(ini, /^\* = host=127\.0\.0\.9 port=6543 /m);
    assert.equal((await call(PoolerPaths.resume, {})).status, 200);
    const state = (await (await call(PoolerPaths.state)).json()) as { paused: boolean; target: unknown };
    assert.deepEqual(state, { paused: false, target: { host: '127.0.0.9', port: 6543 }, reachable: false });
    await pooler.running.admin.command('PAUSE');
    await pooler.running.admin.command('RESUME');
  });

  it('a RESUME for an older pause does not end a newer one', async () => {
    const first = (await (await call(PoolerPaths.pause, { timeoutMs: 2000, holdMs: 30_000 })).json()) as { pauseId: number };
    assert.equal((await call(PoolerPaths.resume, { pauseId: first.pauseId })).status, 200);
    const second = (await (await call(PoolerPaths.pause, { timeoutMs: 2000, holdMs: 30_000 })).json()) as { pauseId: number };
    assert.ok(second.pauseId > first.pauseId);
    const late = await call(PoolerPaths.resume, { pauseId: first.pauseId });
    assert.equal(late.status, 409);
    assert.match(((await late.json()) as { error: string }).error, /superseded/);
    assert.equal((await pooler.running.control.state()).paused, true, 'the newer pause holds');
    assert.equal((await call(PoolerPaths.resume, { pauseId: second.pauseId })).status, 200);
    assert.equal((await pooler.running.control.state()).paused, false);
  });

  it('retargets and ends a pause in one call; an older pause id leaves the newer pause in place', async () => {
    const first = (await (await call(PoolerPaths.pause, { timeoutMs: 2000, holdMs: 30_000 })).json()) as { pauseId: number };
    const both = await call(PoolerPaths.target, { host: '127.0.0.7', port: 6544, resumePauseId: first.pauseId });
    assert.equal(both.status, 200);
    const timings = (await both.json()) as { reloadMs: number; resumeMs: number };
    assert.ok(timings.reloadMs >= 0 && timings.resumeMs >= 0, JSON.stringify(timings));
    assert.deepEqual(await pooler.running.control.state(), { paused: false, target: { host: '127.0.0.7', port: 6544 } });
    // PgBouncer accepts a PAUSE again: the RESUME reached it.
    const second = (await (await call(PoolerPaths.pause, { timeoutMs: 2000, holdMs: 30_000 })).json()) as { pauseId: number };
    const late = await call(PoolerPaths.target, { host: '127.0.0.8', port: 6545, resumePauseId: first.pauseId });
    assert.equal(late.status, 409);
    assert.deepEqual(await pooler.running.control.state(), { paused: true, target: { host: '127.0.0.8', port: 6545 } }, 'retargeted, still paused');
    assert.equal((await call(PoolerPaths.target, { host: 'h', port: 1, resumePauseId: 'one' })).status, 400);
    assert.equal((await call(PoolerPaths.resume, { pauseId: second.pauseId })).status, 200);
  });

  it('resumes on its own when a pause outlives its hold time', async () => {
    assert.equal((await call(PoolerPaths.pause, { timeoutMs: 2000, holdMs: 300 })).status, 200);
    assert.equal((await pooler.running.control.state()).paused, true);
    await new Promise((r) => setTimeout(r, 800));
    assert.equal((await pooler.running.control.state()).paused, false);
    // PgBouncer agrees: a new PAUSE is accepted (it would say "already" while still paused).
    await pooler.running.admin.command('PAUSE');
    await pooler.running.admin.command('RESUME');
  });
});
