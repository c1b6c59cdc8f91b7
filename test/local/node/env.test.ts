import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { V1Container, V1Pod } from '@kubernetes/client-node';
import { EnvResolutionError, expandVariables, resolveContainerEnv, type EnvSources } from '../../../local/node/env.js';
import { containerMounts, rewriteMountPaths } from '../../../local/node/volumes.js';

const sources: EnvSources = {
  async secret(_ns, name) {
    return name === 'db' ? { password: 's3cret', user: 'app' } : undefined;
  },
  async configMap(_ns, name) {
    return name === 'settings' ? { mode: 'fast', level: 'debug' } : undefined;
  },
};

const pod: V1Pod = {
  metadata: { name: 'web-0', namespace: 'shop', uid: 'u-1', labels: { app: 'web' }, annotations: { note: 'hi' } },
  spec: {
    containers: [],
    volumes: [
      { name: 'data', persistentVolumeClaim: { claimName: 'data-web-0' } },
      { name: 'scratch', emptyDir: {} },
    ],
  },
};
const facts = { podIP: '127.0.0.7', hostIP: '127.0.0.1', nodeName: 'n1' };

test('expandVariables follows the Kubernetes $(VAR) rules', () => {
  assert.equal(expandVariables('--name=$(POD_NAME)', { POD_NAME: 'a' }), '--name=a');
  assert.equal(expandVariables('$(MISSING) $$(POD_NAME) $$', { POD_NAME: 'a' }), '$(MISSING) $(POD_NAME) $');
});

test('env resolves downward API, secrets, configmaps, envFrom prefixes and expansion in order', async () => {
  const container: V1Container = {
    name: 'app',
    envFrom: [{ configMapRef: { name: 'settings' }, prefix: 'CFG_' }],
    env: [
      { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
      { name: 'POD_NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
      { name: 'POD_IP', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } },
      { name: 'APP', valueFrom: { fieldRef: { fieldPath: "metadata.labels['app']" } } },
      { name: 'PASSWORD', valueFrom: { secretKeyRef: { name: 'db', key: 'password' } } },
      { name: 'MODE', valueFrom: { configMapKeyRef: { name: 'settings', key: 'mode' } } },
      { name: 'OPTIONAL', valueFrom: { secretKeyRef: { name: 'absent', key: 'x', optional: true } } },
      { name: 'URL', value: 'http://$(POD_IP):8080/$(APP)' },
    ],
  };
  const env = await resolveContainerEnv(pod, container, facts, sources, { PATH: '/bin' });
  assert.equal(env.PATH, '/bin');
  assert.equal(env.POD_NAME, 'web-0');
  assert.equal(env.POD_NAMESPACE, 'shop');
  assert.equal(env.POD_IP, '127.0.0.7');
  assert.equal(env.PASSWORD, 's3cret');
  assert.equal(env.MODE, 'fast');
  assert.equal(env.CFG_level, 'debug');
  assert.equal(env.URL, 'http://127.0.0.7:8080/web');
  assert.equal('OPTIONAL' in env, false);
});

test('a missing secret key is a CreateContainerConfigError naming the key', async () => {
  const container: V1Container = { name: 'app', env: [{ name: 'X', valueFrom: { secretKeyRef: { name: 'db', key: 'nope' } } }] };
  await assert.rejects(
    resolveContainerEnv(pod, container, facts, sources, {}),
    (err: unknown) => err instanceof EnvResolutionError && /nope/.test(err.message) && err.reason === 'CreateContainerConfigError',
  );
});

test('volume mounts map to node folders and mount paths in values are rewritten', () => {
  const mounts = containerMounts('/n', pod, [
    { name: 'data', mountPath: '/var/lib/postgresql/data' },
    { name: 'scratch', mountPath: '/var/lib/postgresql/data/tmp/' },
    { name: 'data', mountPath: '/etc/sub', subPath: 'conf' },
  ]);
  assert.equal(mounts[0].hostPath, '/n/volumes/shop/data-web-0');
  assert.equal(mounts[1].hostPath, '/n/pods/u1/volumes/scratch');
  assert.equal(mounts[2].hostPath, '/n/volumes/shop/data-web-0/conf');
  assert.equal(rewriteMountPaths('--data-dir=/var/lib/postgresql/data/pgdata', mounts), '--data-dir=/n/volumes/shop/data-web-0/pgdata');
  assert.equal(rewriteMountPaths('/var/lib/postgresql/data/tmp/x', mounts), '/n/pods/u1/volumes/scratch/x');
  assert.equal(rewriteMountPaths('a:/etc/sub,b', mounts), 'a:/n/volumes/shop/data-web-0/conf,b');
  // Paths inside a JSON value (settings passed as one JSON environment variable).
  assert.equal(rewriteMountPaths('{"path":"/etc/sub/repo","n":1}', mounts), '{"path":"/n/volumes/shop/data-web-0/conf/repo","n":1}');
  // Only whole path components: /var/lib/postgresql/database is not under the mount.
  assert.equal(rewriteMountPaths('/var/lib/postgresql/database', mounts), '/var/lib/postgresql/database');
  assert.throws(() => containerMounts('/n', pod, [{ name: 'nope', mountPath: '/x' }]), /names no volume/);
});

test('localhost in manifest values means the pod itself', async () => {
  const { rewriteLoopback } = await import('../../../local/node/loopback.js');
  assert.equal(rewriteLoopback('postgresql://127.0.0.1:5432/postgres', '127.0.0.9'), 'postgresql://127.0.0.9:5432/postgres');
  assert.equal(rewriteLoopback('host=localhost port=5432', '127.0.0.9'), 'host=127.0.0.9 port=5432');
  assert.equal(rewriteLoopback('127.0.0.10 localhost.example.com my-localhost', '127.0.0.9'), '127.0.0.10 localhost.example.com my-localhost');
  assert.equal(rewriteLoopback('http://localhost', ''), 'http://localhost');
});
