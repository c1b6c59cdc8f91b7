import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { parse } from 'yaml';
import { ConfigKeys } from '../../../api/naming.js';
import { haNodeSettingsDocumentSchema } from '../../../api/ha-node/settings-document.js';
import { dynamicConfigPatchSchema } from '../../../api/ha-node/dynamic-config.js';
import { buildConfigMap } from '../../../operator/builders/configmap.js';
import { configPatch, desiredDynamicConfig } from '../../../operator/builders/dynamic-config.js';
import { Ports } from '../../../lib/ports.js';
import { loadHaNodeSettings } from '../../../sidecar/ha-node/config.js';
import { validateDynamicConfig } from '../../../sidecar/ha-node/ops/config-validate.js';
import { sampleContext } from '../../operator/fixtures.js';

/** The settings document: what the operator writes is what ha-node reads, through one schema. */
describe('ha-node settings document', () => {
  const dir = mkdtempSync(join(tmpdir(), 'keelson-settings-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const identity = { POD_NAME: 'demo-0', KEELSON_CLUSTER: 'demo', KEELSON_SUPERUSER_PASSWORD: 's', KEELSON_REPLICATION_PASSWORD: 'r' };
  const spec = {
    postgresql: { parameters: { max_connections: '200', work_mem: '8MB' }, pg_hba: ['host all all 10.0.0.0/8 scram-sha-256'] },
    ha: { ttl: 40, synchronousMode: 'strict' },
    pooler: { enabled: true },
    backup: { repositories: [{ name: 'local', volume: { size: '1Gi' } }], processMax: 3 },
  };

  function written(text: string): string {
    const file = join(dir, `${Math.random().toString(36).slice(2)}.yaml`);
    writeFileSync(file, text);
    return file;
  }

  it('reaches ha-node whole: the ConfigMap file loads with the same backup, pooler ports and bootstrap configuration', () => {
    const ctx = sampleContext(spec);
    const text = buildConfigMap(ctx).data![ConfigKeys.haNode]!;
    assert.equal(haNodeSettingsDocumentSchema.safeParse(parse(text)).success, true, 'the file fits the schema');
    const settings = loadHaNodeSettings({ file: written(text), env: identity });
    assert.deepEqual(settings.bootstrapConfig, desiredDynamicConfig(ctx.cluster));
    assert.equal(settings.backup?.processMax, 3);
    assert.equal(settings.backup?.stanza, 'demo');
    assert.equal(settings.poolerPods, Ports.poolerControl);
    assert.equal(settings.poolerReadOnlyPods, Ports.poolerControl);
    assert.equal(settings.pgBin, '/usr/lib/postgresql/15/bin');
  });

  it('refuses a document that does not fit, naming the key', () => {
    const bad = (text: string) => () => loadHaNodeSettings({ file: written(text), env: identity });
    assert.throws(bad('bootstrapConfig:\n  ttl: 40\n  nonsense: 1\n'), /"bootstrapConfig".*nonsense/s);
    assert.throws(bad('backup:\n  stanza: demo\n  repositories: []\n'), /invalid configuration key "backup": repositories/);
    assert.throws(bad('poolerPods: 70000\n'), /poolerPods/);
    assert.throws(bad('backupp: {}\n'), /unknown key/);
  });

  it('keeps the lone-ha-node mode: the same keys from the environment, as JSON', () => {
    const settings = loadHaNodeSettings({
      env: {
        ...identity,
        KEELSON_BOOTSTRAP_CONFIG: '{"ttl": 40}',
        KEELSON_BACKUP: '{"stanza":"demo","repositories":[{"kind":"posix","path":"/r"}]}',
        KEELSON_POOLER_PODS: '8010',
      },
    });
    assert.deepEqual(settings.bootstrapConfig, { ttl: 40 });
    assert.equal(settings.backup?.repositories[0]?.kind, 'posix');
    assert.equal(settings.poolerPods, 8010);
  });

  it('types the PATCH /config bodies the operator sends as ha-node checks them', () => {
    const ctx = sampleContext(spec);
    const desired = desiredDynamicConfig(ctx.cluster);
    const patch = configPatch(desired, { ...desired, db: { parameters: { shared_buffers: '1GB' } }, standby_cluster: { host: 'a', port: 5432 } });
    assert.equal(dynamicConfigPatchSchema.safeParse(patch).success, true);
    assert.deepEqual(validateDynamicConfig(desired), []);
  });
});
