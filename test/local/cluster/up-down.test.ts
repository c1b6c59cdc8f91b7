import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, describe, it } from 'node:test';
import pg from 'pg';
import { Ports } from '../../../lib/ports.js';

const run = promisify(execFile);
const keelson = (...args: string[]) => run(process.execPath, ['--import', 'tsx', 'bin/keelson.ts', ...args], { timeout: 240_000 });

/** `keelson local up --detach` / `local down` through the real CLI, with a 1-instance demo. */
describe('keelson local up / down', { timeout: 300_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'keelson-local-up-'));
  chmodSync(dir, 0o755);

  after(async () => {
    if (existsSync(join(dir, 'pid'))) await keelson('local', 'down', '--dir', dir).catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  });

  it('starts everything, waits for Ready, prints how to connect, and down stops it all', async () => {
    const { stdout } = await keelson('local', 'up', '--dir', dir, '--instances', '1', '--detach', '--ip-prefix', '127.0.43');
    assert.match(stdout, /DatabaseCluster "demo" is Ready/);
    assert.match(stdout, new RegExp(`export KUBECONFIG=${dir}/kubeconfig`));
    const rw = /read-write: .* psql -h (127\.[\d.]+) -p 5432/.exec(stdout)?.[1];
    assert.ok(rw, 'prints the demo-rw address');
    assert.ok(existsSync(join(dir, 'pid')));

    const { stdout: table } = await run('kubectl', ['--kubeconfig', join(dir, 'kubeconfig'), '--cache-dir', join(dir, 'kcache'), 'get', 'dbc', 'demo', '--no-headers']);
    assert.match(table, /demo\s+1\s+1\s+demo-0\s+Healthy/);
    const { stdout: encoded } = await run('kubectl', ['--kubeconfig', join(dir, 'kubeconfig'), '--cache-dir', join(dir, 'kcache'), 'get', 'secret', 'demo-superuser', '-o', 'jsonpath={.data.password}']);
    const client = new pg.Client({ host: rw, port: Ports.postgres, user: 'postgres', password: Buffer.from(encoded, 'base64').toString(), database: 'postgres' });
    await client.connect();
    assert.equal((await client.query('SELECT pg_is_in_recovery() AS standby')).rows[0].standby, false, 'demo-rw reaches the primary');
    await client.end();
    const exporter = /exporter (http:\/\/[\d.]+:9630\/metrics)/.exec(stdout)?.[1];
    assert.ok(exporter, 'prints the exporter URL');
    assert.match(await (await fetch(exporter)).text(), /^pg_up 1$/m, 'the exporter sidecar reaches PostgreSQL with the Secret credentials');
    const ha = /ha-node (http:\/\/[\d.]+:8008\/cluster)/.exec(stdout)?.[1];
    assert.equal(((await (await fetch(ha!)).json()) as { members: Array<{ role: string }> }).members[0]?.role, 'leader');

    const { stdout: down } = await keelson('local', 'down', '--dir', dir);
    assert.match(down, /stopped/);
    assert.equal(existsSync(join(dir, 'pid')), false);
    const { stdout: ps } = await run('ps', ['-eo', 'args']);
    assert.equal(ps.split('\n').filter((line) => line.includes(dir)).length, 0, 'no process of this cluster is left');
    const { stdout: again } = await keelson('local', 'down', '--dir', dir);
    assert.match(again, /nothing running/);
  });
});
