/**
 * `keelson local up --network auto` as root through the real CLI: namespace mode is chosen, the stack runs in an isolated namespace, and this test (in the host's namespace)
 * reaches kubectl (DIR/kubeconfig, as in loopback mode) and PostgreSQL only through the
 * forwarders on 127.0.0.1; pod URLs only through the printed nsenter into the node namespace.
 * `local down` stops everything and leaves no pod namespace.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import pg from 'pg';
import { nodeId } from '../../../local/node/netns/subnet.js';
import { keelson, localUpDir, run } from './cli.js';

describe('keelson local up --network auto as root: network namespaces', { timeout: 300_000 }, () => {
  const dir = localUpDir('keelson-local-netns-');

  it('serves kubectl and psql on 127.0.0.1 forwarders, and down stops it all', async () => {
    const { stdout } = await keelson('local', 'up', '--dir', dir, '--instances', '1', '--detach', '--network', 'auto');
    assert.match(stdout, /^network: namespace: pods in network namespaces/m, 'auto picks namespace mode as root');
    assert.match(stdout, /DatabaseCluster "demo" is Ready/);
    const kubeconfig = join(dir, 'kubeconfig');
    assert.match(stdout, new RegExp(`export KUBECONFIG=${kubeconfig}`));
    assert.match(readFileSync(kubeconfig, 'utf8'), /server: https:\/\/127\.0\.0\.1:\d+/);
    const rwPort = Number(/read-write: .* psql -h 127\.0\.0\.1 -p (\d+) -U postgres/.exec(stdout)?.[1]);
    assert.ok(rwPort > 0, 'prints the demo-rw forwarder');
    const ha = /ha-node (http:\/\/10\.213\.0\.\d+:8008\/cluster) .*\(inside the node namespace only\)/.exec(stdout)?.[1];
    assert.ok(ha, 'prints the ha-node URL as reachable inside only');
    // The printed way in: nsenter into the stack's node namespace (isolated), never from the host's.
    const enter = /pod URLs: +nsenter --net=\/proc\/\$\(cat (\S+)\)\/ns\/net curl/.exec(stdout)?.[1];
    assert.equal(enter, join(dir, 'pid'));
    const stackPid = readFileSync(enter, 'utf8').trim();
    assert.notEqual(readlinkSync(`/proc/${stackPid}/ns/net`), readlinkSync('/proc/self/ns/net'), 'the recorded process is not in the host\'s namespace');
    const { stdout: cluster } = await run('nsenter', [`--net=/proc/${stackPid}/ns/net`, 'curl', '-sf', '--max-time', '5', ha]);
    assert.equal((JSON.parse(cluster) as { members: Array<{ role: string }> }).members[0]?.role, 'leader');

    const kubectl = (...args: string[]) => run('kubectl', ['--kubeconfig', kubeconfig, '--cache-dir', join(dir, 'kcache'), ...args]);
    assert.match((await kubectl('get', 'dbc', 'demo', '--no-headers')).stdout, /demo\s+1\s+1\s+demo-0\s+Healthy/);
    assert.match((await kubectl('get', 'pod', 'demo-0', '-o', 'jsonpath={.status.podIP}')).stdout, /^10\.213\.0\.\d+$/);
    const encoded = (await kubectl('get', 'secret', 'demo-superuser', '-o', 'jsonpath={.data.password}')).stdout;
    const client = new pg.Client({ host: '127.0.0.1', port: rwPort, user: 'postgres', password: Buffer.from(encoded, 'base64').toString(), database: 'postgres' });
    await client.connect();
    assert.equal((await client.query('SELECT pg_is_in_recovery() AS standby')).rows[0].standby, false, 'the forwarder reaches the primary');
    await client.end();

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
