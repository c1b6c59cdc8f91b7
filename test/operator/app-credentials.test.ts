import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { InvalidSpecError, parseDatabaseCluster } from '../../api/crd/validate.js';
import { buildConfigMap } from '../../operator/builders/configmap.js';
import { desiredDynamicConfig } from '../../operator/builders/dynamic-config.js';
import { buildStatefulSet } from '../../operator/builders/statefulset.js';
import { ConfigKeys, ContainerNames } from '../../api/naming.js';
import { loadHaNodeSettings } from '../../sidecar/ha-node/config.js';
import { sampleContext } from './fixtures.js';

/**
 * What the operator hands ha-node for the application owner (spec.bootstrap) and the client rules
 * (spec.postgresql.pg_hba): the names in the ConfigMap file ha-node reads, the password as a file
 * of the mounted <cluster>-app Secret, and bad pg_hba lines refused with the spec.
 */
describe('application owner and pg_hba from the spec', () => {
  it('ha-node, started with the rendered ConfigMap and pod environment, manages the spec.bootstrap owner and database', () => {
    const ctx = sampleContext({ bootstrap: { database: 'shop', owner: 'shopper' } });
    const dir = mkdtempSync(join(tmpdir(), 'keelson-cm-'));
    try {
      const file = join(dir, ConfigKeys.haNode);
      writeFileSync(file, buildConfigMap(ctx).data![ConfigKeys.haNode]!);
      const container = buildStatefulSet(ctx).spec!.template.spec!.containers.find((c) => c.name === ContainerNames.postgres)!;
      const literal = Object.fromEntries((container.env ?? []).filter((e) => e.value !== undefined).map((e) => [e.name, e.value!]));
      const fromSecrets = { KEELSON_SUPERUSER_PASSWORD: 's', KEELSON_REPLICATION_PASSWORD: 'r', POD_NAME: 'demo-0' };
      const settings = loadHaNodeSettings({ file, env: { ...literal, ...fromSecrets } });
      assert.equal(settings.app.owner, 'shopper');
      // The first dynamic configuration: what PATCH /config would send, checked as ha-node checks a PATCH.
      assert.deepEqual(settings.bootstrapConfig, desiredDynamicConfig(ctx.cluster));
      assert.equal(settings.pgBin, '/usr/lib/postgresql/15/bin');
      assert.equal(settings.app.database, 'shop');
      assert.ok(settings.app.passwordFile, 'a password file is named');

      // The file lies in a read-only mount of the app Secret's password key, kept current by the kubelet (no subPath).
      const mount = container.volumeMounts!.find((m) => settings.app.passwordFile!.startsWith(`${m.mountPath}/`))!;
      assert.ok(mount && mount.readOnly && !mount.subPath);
      const volume = buildStatefulSet(ctx).spec!.template.spec!.volumes!.find((v) => v.name === mount.name)!;
      assert.equal(volume.secret?.secretName, 'demo-app');
      assert.deepEqual(volume.secret?.items, [{ key: 'password', path: settings.app.passwordFile!.slice(mount.mountPath.length + 1) }]);
      assert.ok(!(container.env ?? []).some((e) => e.valueFrom?.secretKeyRef?.name === 'demo-app'), 'the app password is not in the environment');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('ha-node refuses a bootstrapConfig it would refuse as a PATCH /config, naming the key', () => {
    const load = (bootstrapConfig: string) =>
      loadHaNodeSettings({
        env: {
          POD_NAME: 'demo-0',
          KEELSON_CLUSTER: 'demo',
          KEELSON_SUPERUSER_PASSWORD: 's',
          KEELSON_REPLICATION_PASSWORD: 'r',
          KEELSON_BOOTSTRAP_CONFIG: bootstrapConfig,
        },
      });
    assert.throws(
      () => load('{"ttl": 10, "loop_wait": 10}'),
      /invalid configuration key "bootstrapConfig": invalid configuration: "loop_wait" violates loop_wait \+ 2\*retry_timeout <= ttl/,
    );
    assert.throws(() => load('{"db": {"parameters": {"port": "1"}}}'), /"db\.parameters\.port" is managed by ha-node/);
    assert.throws(() => load('[1]'), /"bootstrapConfig": must be a JSON object/);
    assert.deepEqual(load('{"ttl": 40}').bootstrapConfig, { ttl: 40 });
  });

  it('refuses an owner named like the roles ha-node uses', () => {
    assert.throws(
      () => parseDatabaseCluster(sampleRaw({ bootstrap: { owner: 'postgres' } })),
      /bootstrap\.owner must not be postgres, replicator or keelson_pooler/,
    );
  });

  it('refuses a pg_hba line PostgreSQL would reject, naming the line; hostssl needs ssl = on', () => {
    const bad = () => parseDatabaseCluster(sampleRaw({ postgresql: { pg_hba: ['host all all 0.0.0.0/0 scram-sha-256', 'host all all 0.0.0.0/0 magic'] } }));
    assert.throws(
      bad,
      (error: unknown) =>
        error instanceof InvalidSpecError &&
        /spec\.postgresql\.pg_hba: line 2 "host all all 0\.0\.0\.0\/0 magic" has an unknown authentication method/.test(error.message),
    );
    assert.throws(() => parseDatabaseCluster(sampleRaw({ postgresql: { pg_hba: ['hostssl all all 0.0.0.0/0 md5'] } })), /ssl = on/);
    const ok = parseDatabaseCluster(sampleRaw({ postgresql: { parameters: { ssl: 'on' }, pg_hba: ['hostssl all all 0.0.0.0/0 md5'] } }));
    assert.deepEqual(ok.spec.postgresql.pg_hba, ['hostssl all all 0.0.0.0/0 md5']);
  });
});

function sampleRaw(spec: Record<string, unknown>): unknown {
  return { apiVersion: 'keelson.io/v1', kind: 'DatabaseCluster', metadata: { name: 'demo', namespace: 'db', uid: 'u-1' }, spec };
}
