/**
 * `keelson local up` as root through the real CLI, no --network given (auto, the default):
 * namespace mode is chosen, the stack runs in an isolated namespace, and this test (in the host's namespace)
 * reaches kubectl (DIR/kubeconfig, as in loopback mode), PostgreSQL and `keelson ctl` (list,
 * switchover) only through the forwarders on 127.0.0.1; pod URLs only through the printed nsenter
 * into the node namespace. ctl with a kubeconfig that names no member proxy refuses the private
 * pod addresses. The members run the sources compiled once (.keelson-cli/), not through tsx. `local down` stops everything and leaves no pod namespace.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import pg from 'pg';
import { nodeId } from '../../../local/node/netns/subnet.js';
import { eventually } from '../../operator/support.js';
import { keelson, localUpDir, run } from './cli.js';

describe('keelson local up as root (--network auto by default): network namespaces', { timeout: 300_000 }, () => {
  const dir = localUpDir('keelson-local-netns-');

  it('serves kubectl, psql and keelson ctl on 127.0.0.1 forwarders, and down stops it all', async () => {
    const { stdout } = await keelson('local', 'up', '--dir', dir, '--instances', '2', '--detach');
    assert.match(stdout, /^network: namespace: pods in network namespaces/m, 'the default (auto) picks namespace mode as root');
    assert.match(stdout, /DatabaseCluster "demo" is Ready/);
    const kubeconfig = join(dir, 'kubeconfig');
    assert.match(stdout, new RegExp(`export KUBECONFIG=${kubeconfig}`));
    assert.match(readFileSync(kubeconfig, 'utf8'), /server: https:\/\/127\.0\.0\.1:\d+/);
    const printed =
      /read-write: .* psql "host=demo-rw\.default\.svc hostaddr=127\.0\.0\.1 port=(\d+) sslmode=verify-full sslrootcert=(\S+) user=postgres"/.exec(stdout);
    const rwPort = Number(printed?.[1]);
    assert.ok(rwPort > 0, 'prints the demo-rw forwarder');
    const ha =
      /ha-node (https:\/\/demo-\d\.demo-headless\.default\.svc:8008\/cluster) \(curl (--cacert \S+) (--resolve \S+:10\.213\.0\.\d+)\) .*\(inside the node namespace only\)/.exec(
        stdout,
      );
    assert.ok(ha, 'prints the ha-node URL with its CA, as reachable inside only');
    // The printed way in: nsenter into the stack's node namespace (isolated), never from the host's.
    const enter = /pod URLs: +nsenter --net=\/proc\/\$\(cat (\S+)\)\/ns\/net curl/.exec(stdout)?.[1];
    assert.equal(enter, join(dir, 'pid'));
    const stackPid = readFileSync(enter, 'utf8').trim();
    assert.notEqual(readlinkSync(`/proc/${stackPid}/ns/net`), readlinkSync('/proc/self/ns/net'), "the recorded process is not in the host's namespace");
    const curlArgs = ['-sf', '--max-time', '5', ...ha[2]!.split(' '), ...ha[3]!.split(' '), ha[1]!];
    const { stdout: cluster } = await run('nsenter', [`--net=/proc/${stackPid}/ns/net`, 'curl', ...curlArgs]);
    assert.ok((JSON.parse(cluster) as { members: Array<{ role: string }> }).members.some((m) => m.role === 'leader'));

    const kubectl = (...args: string[]) => run('kubectl', ['--kubeconfig', kubeconfig, '--cache-dir', join(dir, 'kcache'), ...args]);
    assert.match((await kubectl('get', 'dbc', 'demo', '--no-headers')).stdout, /demo\s+2\s+2\s+demo-\d\s+Healthy/);
    assert.match((await kubectl('get', 'pod', 'demo-0', '-o', 'jsonpath={.status.podIP}')).stdout, /^10\.213\.0\.\d+$/);
    const encoded = (await kubectl('get', 'secret', 'demo-superuser', '-o', 'jsonpath={.data.password}')).stdout;
    const client = new pg.Client({
      host: '127.0.0.1',
      port: rwPort,
      user: 'postgres',
      password: Buffer.from(encoded, 'base64').toString(),
      database: 'postgres',
      // Every remote session needs TLS: verified by the Service's name against the printed CA file.
      ssl: { ca: readFileSync(printed![2]!, 'utf8'), servername: 'demo-rw.default.svc', rejectUnauthorized: true },
    });
    await client.connect();
    assert.equal((await client.query('SELECT pg_is_in_recovery() AS standby')).rows[0].standby, false, 'the forwarder reaches the primary');
    await client.end();

    // keelson ctl as printed: members found through the Leases, reached through the member proxy forwarder.
    assert.match(stdout, new RegExp(`keelson ctl: keelson ctl --kubeconfig ${kubeconfig} -c demo list`));
    const ctl = (...args: string[]) => keelson('ctl', '--kubeconfig', kubeconfig, '-c', 'demo', ...args);
    const members = () =>
      ctl('list', '-o', 'json').then(
        ({ stdout: json }) => (JSON.parse(json) as { members: Array<{ name: string; role: string; state: string; lag?: number | string }> }).members,
      );
    assert.match((await ctl('list')).stdout, /demo-0[\s\S]*demo-1/, 'the table lists both members');
    const listed = await members();
    const leader = listed.find((m) => m.role === 'leader')?.name;
    const candidate = listed.find((m) => m.role !== 'leader')?.name;
    assert.ok(leader && candidate, `a leader and a replica: ${JSON.stringify(listed)}`);
    // The first backup's WAL may still be on its way: a switchover waits for a streaming replica within maximum_lag_on_failover.
    await eventually(
      'the replica streams and has caught up',
      async () => (await members()).some((m) => m.name === candidate && m.state === 'streaming' && typeof m.lag === 'number' && m.lag < 1_048_576),
      60_000,
    );
    const { stdout: switched } = await ctl('switchover', '--candidate', candidate, '--force');
    assert.match(switched, new RegExp(`Successfully switched over to "${candidate}"`));
    await eventually('ctl list shows the new leader', async () => (await members()).find((m) => m.role === 'leader')?.name === candidate, 30_000);

    // The same cluster through a kubeconfig without the member proxy: refused before anything is sent.
    const bare = join(dir, 'no-proxy.kubeconfig');
    writeFileSync(bare, readFileSync(kubeconfig, 'utf8').replace(/\n\s+extensions:\n(\s+- .*\n|\s{6,}.*\n)+/, '\n'), { mode: 0o600 });
    assert.doesNotMatch(readFileSync(bare, 'utf8'), /member-proxy/);
    const refused = await keelson('ctl', '--kubeconfig', bare, '-c', 'demo', 'list').then(
      () => undefined,
      (error: { code?: number; stderr?: string }) => error,
    );
    assert.equal(refused?.code, 3, 'nothing reachable from here');
    assert.match(refused?.stderr ?? '', /refusing to send to member address 10\.213\.0\.\d+: the cluster's API server is on this machine/);

    // Started from the sources (as `npm run local:up`), the members run the sources compiled once, not through tsx (ADR 0358).
    const { stdout: running } = await run('ps', ['-eo', 'args']);
    const haNodes = running.split('\n').filter((line) => line.includes(' ha-node --config ') && line.includes(dir));
    assert.ok(haNodes.length >= 2, `both members' ha-node processes are listed: ${haNodes.join('\n')}`);
    assert.ok(
      haNodes.every((line) => line.includes('/.keelson-cli/') && !line.includes('--import')),
      `ha-node runs compiled JavaScript: ${haNodes.join('\n')}`,
    );

    const { stdout: down } = await keelson('local', 'down', '--dir', dir);
    assert.match(down, /stopped/);
    const { stdout: ps } = await run('ps', ['-eo', 'args']);
    assert.equal(ps.split('\n').filter((line) => line.includes(dir)).length, 0, 'no process of this cluster is left');
    // The node's id comes from its folder, as the agent derives it.
    const node = nodeId(createHash('sha256').update(join(dir, 'node')).digest('hex'));
    const { stdout: namespaces } = await run('ip', ['netns', 'list']);
    assert.ok(!namespaces.includes(`keelson-${node}-`), `no pod namespace of this node is left: ${namespaces}`);
  });
});
