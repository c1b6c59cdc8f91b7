import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import type { V1ClusterRole, V1Deployment, V1PolicyRule, V1Secret } from '@kubernetes/client-node';
import { adminKubeRules } from '../../admin/modules/business/database-clusters/kube.js';
import { AdminPaths, Ports } from '../../lib/ports.js';
import { rulesCover } from '../../operator/rbac.js';
import { startPostgres, type TestPostgres } from '../support/postgres.js';
import { freePort } from '../support/ports.js';
import { startRedis, type TestRedis } from '../support/redis.js';
import { renderChart, type K8sDoc } from './render.js';

/**
 * The chart's admin backend as a user installs it: a required SECRET_KEY with a clear message,
 * its own ServiceAccount allowed only the DatabaseCluster calls it makes, and a process started
 * with exactly the rendered container's arguments and environment (plus the image's NODE_ENV)
 * that comes up healthy.
 */
const find = <T>(docs: K8sDoc[], kind: string, name: string) => docs.find((d) => d.kind === kind && d.metadata.name === name) as unknown as T;
const secretKey = 'chart-test-secret-key-0123456789';

/** ENV settings of the Dockerfile's final stage (the image's environment). */
function imageEnv(): Record<string, string> {
  const text = readFileSync('Dockerfile', 'utf8');
  const finalStage = text.slice(text.lastIndexOf('\nFROM '));
  const env: Record<string, string> = {};
  for (const line of finalStage.split('\n').filter((l) => /^ENV\s/.test(l))) {
    for (const match of line.slice(4).matchAll(/(\w+)=("[^"]*"|\S+)/g)) env[match[1]!] = match[2]!.replace(/^"|"$/g, '');
  }
  return env;
}

describe('charts/keelson admin backend', () => {
  let server: TestPostgres;
  let redis: TestRedis;

  before(async () => {
    server = await startPostgres();
    redis = await startRedis();
    await server.query('CREATE DATABASE chart_admin');
  });

  after(async () => {
    await redis?.stop();
    await server?.stop();
  });

  it('refuses to render without a secret key, naming the values that provide it', () => {
    assert.throws(() => renderChart({ admin: { enabled: true, existingSecret: 'env' } }), /admin\.secretKey .* or admin\.secretKeySecret .* is required when admin\.enabled/);
    assert.throws(() => renderChart({ admin: { enabled: true, existingSecret: 'env', secretKey: 'too-short' } }), /admin\.secretKey must be at least 16 characters/);
    const docs = renderChart({ admin: { enabled: true, existingSecret: 'env', secretKeySecret: 'my-admin-key' } });
    const container = find<V1Deployment>(docs, 'Deployment', 'keelson-admin').spec!.template.spec!.containers[0]!;
    assert.deepEqual(container.env?.find((e) => e.name === 'SECRET_KEY')?.valueFrom?.secretKeyRef, { name: 'my-admin-key', key: 'SECRET_KEY' });
    assert.ok(!docs.some((d) => d.kind === 'Secret'), 'no chart Secret when an existing one is named');
  });

  it('runs under its own ServiceAccount, allowed exactly the DatabaseCluster calls it makes, in the operator scope', () => {
    const docs = renderChart({ admin: { enabled: true, existingSecret: 'env', secretKey } });
    const pod = find<V1Deployment>(docs, 'Deployment', 'keelson-admin').spec!.template.spec!;
    const operatorAccount = find<V1Deployment>(docs, 'Deployment', 'keelson-operator').spec!.template.spec!.serviceAccountName;
    assert.equal(pod.serviceAccountName, 'keelson-admin');
    assert.notEqual(pod.serviceAccountName, operatorAccount);
    assert.ok(find(docs, 'ServiceAccount', 'keelson-admin'));
    const role = find<V1ClusterRole>(docs, 'ClusterRole', 'keelson-admin');
    assert.deepEqual(rulesCover(role.rules as V1PolicyRule[], adminKubeRules()), [], 'everything the admin calls');
    assert.deepEqual(rulesCover(adminKubeRules(), role.rules as V1PolicyRule[]), [], 'nothing more');
    const binding = docs.find((d) => d.kind === 'ClusterRoleBinding' && d.metadata.name === 'keelson-admin') as unknown as { subjects: Array<{ name: string }> };
    assert.deepEqual(binding.subjects.map((s) => s.name), ['keelson-admin']);
    const scoped = renderChart({ admin: { enabled: true, existingSecret: 'env', secretKey }, operator: { watchNamespaces: ['team-a'] } });
    assert.ok(!scoped.some((d) => d.kind === 'ClusterRoleBinding' && d.metadata.name === 'keelson-admin'));
    assert.deepEqual(scoped.filter((d) => d.kind === 'RoleBinding' && d.metadata.name === 'keelson-admin').map((d) => d.metadata.namespace), ['team-a']);
  });

  it('starts from the rendered environment under the image NODE_ENV and answers its health check', async () => {
    const docs = renderChart({ admin: { enabled: true, existingSecret: 'keelson-admin-env', secretKey } });
    const container = find<V1Deployment>(docs, 'Deployment', 'keelson-admin').spec!.template.spec!.containers[0]!;
    const secrets = new Map(docs.filter((d) => d.kind === 'Secret').map((d) => [d.metadata.name, d as unknown as V1Secret]));
    // The user's Secret (envFrom) is not part of the chart; the test plays it with real servers.
    const userSecret: Record<string, string> = { DATABASE_URL: server.urlFor('chart_admin'), REDIS_URL: redis.url };
    const env: Record<string, string> = { ...imageEnv() };
    assert.equal(env.NODE_ENV, 'production', 'the image runs admin in production mode');
    for (const source of container.envFrom ?? []) {
      assert.equal(source.secretRef?.name, 'keelson-admin-env');
      Object.assign(env, userSecret);
    }
    for (const entry of container.env ?? []) {
      const ref = entry.valueFrom?.secretKeyRef;
      if (entry.value !== undefined) env[entry.name] = entry.value;
      else if (ref) env[entry.name] = Buffer.from(secrets.get(ref.name ?? '')!.data![ref.key]!, 'base64').toString('utf8');
    }
    assert.equal(env.SECRET_KEY, secretKey);
    const port = await freePort();
    // The listen address is the one change: the pod's ":8080" becomes a loopback port here.
    assert.ok(container.args!.includes(`--listen=:${Ports.admin}`));
    const args = container.args!.map((a) => (a.startsWith('--listen=') ? `--listen=127.0.0.1:${port}` : a));
    const child = spawn(process.execPath, ['--import', 'tsx', 'bin/keelson.ts', ...args], {
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env, ARGON2_MEMORY_KIB: '1024', ARGON2_TIME_COST: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout?.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr?.on('data', (d: Buffer) => (output += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      let status = 0;
      for (let i = 0; i < 300 && status !== 200 && child.exitCode === null; i++) {
        status = await fetch(`http://127.0.0.1:${port}${AdminPaths.health}`).then((r) => r.status, () => 0);
        if (status !== 200) await new Promise((r) => setTimeout(r, 100));
      }
      assert.equal(status, 200, `admin is healthy; its output:\n${output.slice(-1000)}`);
      assert.equal(container.readinessProbe?.httpGet?.path, AdminPaths.health);
    } finally {
      child.kill('SIGTERM');
      await exited;
    }
  });
});
