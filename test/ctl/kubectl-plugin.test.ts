import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { accessSync, constants, readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { podForRole, type PodSummary } from '../../ctl/kubectl/cluster-pods.js';
import { logsArgs, psqlArgs } from '../../ctl/kubectl/kubectl-args.js';
import { statusText } from '../../ctl/kubectl/plugin.js';
import { repoRoot } from '../sidecar/ha-node/harness.js';

/** `kubectl keelson`: found by the real kubectl as a plugin, and the kubectl command lines it hands over to. */
describe('kubectl keelson', () => {
  it('is an executable kubectl finds on PATH, and a package "bin" entry', () => {
    const pkg = JSON.parse(readFileSync(`${repoRoot}package.json`, 'utf8')) as { bin: Record<string, string> };
    assert.equal(pkg.bin['kubectl-keelson'], 'dist/bin/kubectl-keelson.js');
    accessSync(`${repoRoot}bin/kubectl-keelson`, constants.X_OK);
    const env = { ...process.env, PATH: `${repoRoot}bin:${process.env.PATH ?? ''}` };
    assert.match(execFileSync('kubectl', ['plugin', 'list'], { env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }), /bin\/kubectl-keelson\n/);
    const help = execFileSync('kubectl', ['keelson', '--help'], { env, encoding: 'utf8', cwd: '/tmp' });
    for (const command of ['status', 'promote', 'restart', 'psql', 'logs']) assert.match(help, new RegExp(`\\n  ${command} `), `${command} is listed`);
  });

  it("psql opens the primary's (or a replica's) postgres container as the superuser", () => {
    const pods: PodSummary[] = [
      { name: 'demo-0', role: 'replica', phase: 'Running', ready: true },
      { name: 'demo-1', role: 'primary', phase: 'Running', ready: true },
      { name: 'demo-2', role: 'replica', phase: 'Pending', ready: false },
    ];
    assert.equal(podForRole(pods, false)?.name, 'demo-1');
    assert.equal(podForRole([...pods].reverse(), true)?.name, 'demo-0', 'a ready replica before one that is not');
    assert.equal(
      podForRole(
        pods.filter((p) => p.role !== 'primary'),
        false,
      ),
      undefined,
    );
    assert.deepEqual(psqlArgs({ namespace: 'db', kubeconfig: '/k' }, 'demo-1', ['-c', 'SELECT 1'], false), [
      '--kubeconfig',
      '/k',
      '--namespace',
      'db',
      'exec',
      '-i',
      'demo-1',
      '-c',
      'postgres',
      '--',
      'psql',
      '-U',
      'postgres',
      '-c',
      'SELECT 1',
    ]);
    assert.ok(psqlArgs({ namespace: 'db' }, 'demo-1', [], true).includes('-it'), 'a terminal gets a tty');
  });

  it("logs reads the postgres container (ha-node's log) of every pod of the cluster, or one", () => {
    assert.deepEqual(logsArgs({ namespace: 'db', context: 'prod' }, 'demo', { follow: true, tail: '100' }), [
      '--context',
      'prod',
      '--namespace',
      'db',
      'logs',
      '-l',
      'keelson.io/cluster=demo',
      '--max-log-requests',
      '10',
      '-c',
      'postgres',
      '--prefix',
      '--follow',
      '--tail',
      '100',
    ]);
    assert.deepEqual(logsArgs({ namespace: 'db' }, 'demo', { pod: 'demo-2', since: '5m' }), [
      '--namespace',
      'db',
      'logs',
      'demo-2',
      '-c',
      'postgres',
      '--prefix',
      '--since',
      '5m',
    ]);
  });

  it('status shows phase, readiness, primary and conditions of the DatabaseCluster', () => {
    const text = statusText(
      'demo',
      'db',
      {
        apiVersion: 'keelson.io/v1',
        kind: 'DatabaseCluster',
        metadata: { name: 'demo', namespace: 'db' },
        spec: { instances: 3 } as never,
        status: {
          phase: 'Degraded',
          readyInstances: 2,
          currentPrimary: 'demo-1',
          conditions: [{ type: 'Ready', status: 'False', reason: 'InstancesNotReady', message: '2 of 3 ready', lastTransitionTime: '2026-01-01T00:00:00Z' }],
        },
      } as never,
      [{ name: 'demo-1', role: 'primary', phase: 'Running', ready: true, node: 'n1' }],
    );
    assert.match(text, /Phase: +Degraded\nInstances: +2\/3 ready\nPrimary: +demo-1\nCondition: +Ready=False \(InstancesNotReady\): 2 of 3 ready/);
    assert.match(text, /\| demo-1 \| primary \| Running \| yes +\| n1 +\|/);
  });
});
