import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import pg from 'pg';
import { Ports } from '../../../lib/ports.js';
import { kubeJson } from '../../support/kube.js';
import { claimMountsUnder } from '../../../local/node/claim-filesystems.js';
import { keelson, localUpDir, run } from './cli.js';

/** `keelson local up --detach --network loopback` / `local down` through the real CLI, with a 1-instance demo. */
describe('keelson local up / down (loopback network)', { timeout: 300_000 }, () => {
  const dir = localUpDir('keelson-local-up-');

  /** --fault-injection: the pod has its own token, cannot use the hook, and the admin cuts it off and lifts the cut. */
  async function cutAndRestorePod(): Promise<void> {
    const adminConfig = readFileSync(join(dir, 'kubeconfig'), 'utf8');
    const admin = {
      url: /server: (\S+)/.exec(adminConfig)![1],
      token: /token: (\S+)/.exec(adminConfig)![1],
      caCert: readFileSync(join(dir, 'apiserver', 'ca.crt'), 'utf8'),
    };
    // demo-0's own folder (named by its uid), not another pod's such as the pooler's.
    const { stdout: uid } = await run('kubectl', [
      '--kubeconfig',
      join(dir, 'kubeconfig'),
      '--cache-dir',
      join(dir, 'kcache'),
      'get',
      'pod',
      'demo-0',
      '-o',
      'jsonpath={.metadata.uid}',
    ]);
    const podConfig = join(dir, 'node', 'pods', uid.replace(/-/g, '').slice(0, 16), 'kubeconfig');
    assert.ok(existsSync(podConfig), 'the database pod has a kubeconfig of its own');
    const pod = { ...admin, token: /token: (\S+)/.exec(readFileSync(podConfig, 'utf8'))![1] };
    const whoami = await kubeJson(pod, 'POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', {
      body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' },
    });
    assert.equal((whoami.body.status as { userInfo: { username: string } }).userInfo.username, 'system:serviceaccount:default:demo');
    assert.equal((await kubeJson(pod, 'POST', '/_keelson/faults/refuse', { body: { pod: 'default/demo-0' } })).status, 403, 'not open to pods');
    const refused = await kubeJson(admin, 'POST', '/_keelson/faults/refuse', { body: { pod: 'default/demo-0', response: 503 } });
    assert.equal(refused.status, 200);
    assert.equal((await kubeJson(pod, 'GET', '/api/v1/namespaces/default/pods')).status, 503, 'demo-0 is cut from the API');
    assert.equal((await kubeJson(admin, 'GET', '/api/v1/namespaces/default/pods')).status, 200);
    assert.equal((await kubeJson(admin, 'POST', '/_keelson/faults/lift', { body: { id: refused.body.id } })).status, 200);
    assert.equal((await kubeJson(pod, 'GET', '/api/v1/namespaces/default/pods')).status, 200, 'lifted');
  }

  it('starts everything, waits for Ready, prints how to connect, and down stops it all', async () => {
    const { stdout } = await keelson(
      'local',
      'up',
      '--dir',
      dir,
      '--instances',
      '1',
      '--detach',
      '--ip-prefix',
      '127.0.43',
      '--fault-injection',
      '--network',
      'loopback',
    );
    assert.match(stdout, /DatabaseCluster "demo" is Ready/);
    assert.match(stdout, new RegExp(`export KUBECONFIG=${dir}/kubeconfig`));
    const printed =
      /read-write: +PGPASSWORD=.* psql "(host=demo-rw\.default\.svc hostaddr=(127\.[\d.]+) port=5432 sslmode=verify-full sslrootcert=(\S+)) user=postgres"/.exec(
        stdout,
      );
    assert.ok(printed, 'prints a verify-full connection to demo-rw');
    const rw = printed[2]!;
    // The cluster CA as printed: every remote session needs TLS, verified by the Service's name.
    const ca = readFileSync(printed[3]!, 'utf8');
    assert.ok(existsSync(join(dir, 'pid')));

    const { stdout: table } = await run('kubectl', [
      '--kubeconfig',
      join(dir, 'kubeconfig'),
      '--cache-dir',
      join(dir, 'kcache'),
      'get',
      'dbc',
      'demo',
      '--no-headers',
    ]);
    assert.match(table, /demo\s+1\s+1\s+demo-0\s+Healthy/);
    // The demo has a filesystem repository and takes its first backup once archiving works; Ready does not wait for it.
    assert.match(stdout, /backups: +the first backup runs now/);
    const rootMode = process.getuid?.() === 0;
    assert.match(stdout, rootMode ? /volumes: each claim is a filesystem of its claimed size/ : /volumes: folders without a size/);
    if (rootMode) assert.ok(claimMountsUnder(join(dir, 'node')).length > 0, 'the data claim is a mounted volume');
    assert.match(stdout, /^ {2}Healthy: 1\/1 ready, primary demo-0 \[demo-0:primary\] {2}\[\d+\.\d s\]$/m, 'progress lines carry the seconds since the start');
    let backups = '';
    for (let i = 0; i < 240 && !/Completed/.test(backups); i += 1) {
      if (i > 0) await new Promise((r) => setTimeout(r, 500));
      backups = (await run('kubectl', ['--kubeconfig', join(dir, 'kubeconfig'), '--cache-dir', join(dir, 'kcache'), 'get', 'kbk', '--no-headers'])).stdout;
    }
    assert.match(backups, /^demo-initial\s+demo\s+full\s+Completed\s+\d{8}-\d{6}F\s/m);
    // The background process tells the outcome in its log once it is known.
    for (let i = 0; i < 60 && !/backups: +demo-initial Completed/.test(readFileSync(join(dir, 'up.log'), 'utf8')); i += 1)
      await new Promise((r) => setTimeout(r, 500));
    assert.match(readFileSync(join(dir, 'up.log'), 'utf8'), /backups: +demo-initial Completed \(\d{8}-\d{6}F, \d+ bytes\)/);
    const { stdout: encoded } = await run('kubectl', [
      '--kubeconfig',
      join(dir, 'kubeconfig'),
      '--cache-dir',
      join(dir, 'kcache'),
      'get',
      'secret',
      'demo-superuser',
      '-o',
      'jsonpath={.data.password}',
    ]);
    const client = new pg.Client({
      host: rw,
      port: Ports.postgres,
      user: 'postgres',
      password: Buffer.from(encoded, 'base64').toString(),
      database: 'postgres',
      ssl: { ca, servername: 'demo-rw.default.svc', rejectUnauthorized: true },
    });
    await client.connect();
    assert.equal((await client.query('SELECT pg_is_in_recovery() AS standby')).rows[0].standby, false, 'demo-rw reaches the primary');
    await client.end();
    // psql as printed: verify-full against the cluster CA, with the Secret's password.
    const { stdout: ssl } = await run(
      'psql',
      ['-X', '-At', '-d', `${printed[1]} user=postgres dbname=postgres`, '-c', 'SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()'],
      { env: { ...process.env, PGPASSWORD: Buffer.from(encoded, 'base64').toString() } },
    );
    assert.equal(ssl.trim(), 't', 'the printed psql line connects over verified TLS');
    // The pooled connection string works as printed: the app role through demo-pooler-rw reaches the primary.
    const pooled =
      /pooled: .* psql "host=demo-pooler-rw\.default\.svc hostaddr=(127\.[\d.]+) port=5432 sslmode=verify-full sslrootcert=\S+ user=(\w+) dbname=(\w+)"/.exec(
        stdout,
      );
    assert.ok(pooled, 'prints the demo-pooler-rw connection string');
    const { stdout: appSecret } = await run('kubectl', [
      '--kubeconfig',
      join(dir, 'kubeconfig'),
      '--cache-dir',
      join(dir, 'kcache'),
      'get',
      'secret',
      'demo-app',
      '-o',
      'jsonpath={.data.password}',
    ]);
    const app = new pg.Client({
      host: pooled[1],
      port: Ports.postgres,
      user: pooled[2],
      password: Buffer.from(appSecret, 'base64').toString(),
      database: pooled[3],
      ssl: { ca, servername: 'demo-pooler-rw.default.svc', rejectUnauthorized: true },
    });
    await app.connect();
    assert.equal((await app.query('SELECT pg_is_in_recovery() AS standby')).rows[0].standby, false, 'the pooler reaches the primary');
    await app.end();
    // keelson ctl as printed: in loopback mode the members' addresses are loopback ones, reached directly.
    assert.match(stdout, new RegExp(`keelson ctl: keelson ctl --kubeconfig ${dir}/kubeconfig -c demo list`));
    const { stdout: ctlList } = await keelson('ctl', '--kubeconfig', join(dir, 'kubeconfig'), '-c', 'demo', 'list', '-o', 'json');
    assert.equal((JSON.parse(ctlList) as { members: Array<{ name: string; role: string }> }).members.find((m) => m.name === 'demo-0')?.role, 'leader');
    const exporter = /exporter (http:\/\/[\d.]+:9630\/metrics)/.exec(stdout)?.[1];
    assert.ok(exporter, 'prints the exporter URL');
    assert.match(await (await fetch(exporter)).text(), /^pg_up 1$/m, 'the exporter sidecar reaches PostgreSQL with the Secret credentials');
    // ha-node over HTTPS, as printed: curl verifies the pod's name against the cluster CA while dialling its address.
    const ha = /ha-node (https:\/\/demo-0\.demo-headless\.default\.svc:8008\/cluster) \(curl (--cacert \S+) (--resolve \S+)\)/.exec(stdout);
    assert.ok(ha, 'prints the ha-node URL with its CA');
    const { stdout: members } = await run('curl', ['-sf', '--max-time', '5', ...ha[2]!.split(' '), ...ha[3]!.split(' '), ha[1]!]);
    assert.equal((JSON.parse(members) as { members: Array<{ role: string }> }).members[0]?.role, 'leader');
    await assert.rejects(run('curl', ['-sf', '--max-time', '5', ha[1]!.replace('https://', 'http://'), ...ha[3]!.split(' ')]), 'plain HTTP is refused');

    await cutAndRestorePod();

    const { stdout: down } = await keelson('local', 'down', '--dir', dir);
    assert.match(down, /stopped/);
    assert.equal(existsSync(join(dir, 'pid')), false);
    const { stdout: ps } = await run('ps', ['-eo', 'args']);
    assert.equal(ps.split('\n').filter((line) => line.includes(dir)).length, 0, 'no process of this cluster is left');
    assert.deepEqual(claimMountsUnder(join(dir, 'node')), [], 'no claim volume is left mounted');
    const { stdout: again } = await keelson('local', 'down', '--dir', dir);
    assert.match(again, /nothing running/);
  });
});
