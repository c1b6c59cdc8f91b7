import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { stringify } from 'yaml';
import { apiVersion } from '../../api/crd/types.js';
import { startTestApiServer, type TestApiServer } from '../support/kube.js';
import { applyCluster, applyCrds, kubectl } from './support.js';

const ns = 'managed';

/**
 * spec.roles and Database objects as `kubectl apply` meets them on the stand-in with the
 * generated CRDs: every refusal the schema promises, with the field named; good objects pass and
 * `kubectl get kdb` shows the printer columns.
 */
describe('roles and Database admission through kubectl apply (generated CRDs on the stand-in)', () => {
  let server: TestApiServer;
  let dir: string;

  before(async () => {
    server = await startTestApiServer();
    dir = mkdtempSync(join(tmpdir(), 'keelson-managed-admission-'));
    assert.equal(await applyCrds(server.kubeconfigPath, dir), true, 'the stand-in takes the CRDs with their CEL rules');
    await kubectl(server.kubeconfigPath, dir, 'create', 'namespace', ns);
  });

  after(async () => {
    await server?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  async function refusedRoles(roles: unknown[], message: RegExp): Promise<void> {
    const result = await applyCluster(server.kubeconfigPath, dir, ns, 'roles', { roles });
    assert.equal(result.ok, false, `${JSON.stringify(roles)} was accepted: ${result.output}`);
    assert.match(result.output, message, JSON.stringify(roles));
  }

  async function applyDatabase(name: string, spec: Record<string, unknown>): Promise<{ ok: boolean; output: string }> {
    const file = join(dir, `db-${Math.random().toString(36).slice(2)}.yaml`);
    writeFileSync(file, stringify({ apiVersion, kind: 'Database', metadata: { name, namespace: ns }, spec }));
    try {
      return { ok: true, output: await kubectl(server.kubeconfigPath, dir, 'apply', '-f', file) };
    } catch (err) {
      return { ok: false, output: String((err as { stderr?: string }).stderr ?? err) };
    }
  }

  it('refuses reserved role names, naming spec.roles[i].name', async () => {
    for (const name of ['postgres', 'replicator', 'keelson_pooler', 'pg_monitor2', 'PUBLIC']) {
      await refusedRoles([{ name }], /spec\.roles\[0\]\.name: Invalid value: "string": reserved role name/);
    }
  });

  it('refuses invalid identifiers and names over 63 bytes', async () => {
    await refusedRoles([{ name: 'has space' }], /spec\.roles\[0\]\.name: Invalid value: "has space": spec\.roles\[0\]\.name in body should match/);
    await refusedRoles([{ name: 'x'.repeat(64) }], /spec\.roles\[0\]\.name: Too long/);
    await refusedRoles([{ name: 'ok', inRoles: ['bad;name'] }], /spec\.roles\[0\]\.inRoles\[0\]/);
  });

  it('refuses duplicates, a superuser without passwordSecret, the bootstrap owner and bad values', async () => {
    await refusedRoles([{ name: 'dup' }, { name: 'dup' }], /spec\.roles\[1\]: Duplicate value/);
    await refusedRoles([{ name: 'root', superuser: true }], /spec\.roles\[0\]: Invalid value: "object": a superuser role needs passwordSecret/);
    await refusedRoles([{ name: 'app' }], /the bootstrap owner is kept by ha-node/);
    await refusedRoles([{ name: 'limited', connectionLimit: -2 }], /spec\.roles\[0\]\.connectionLimit: Invalid value: -2/);
    await refusedRoles([{ name: 'expiring', validUntil: 'next tuesday' }], /spec\.roles\[0\]\.validUntil: Invalid value: "next tuesday"/);
  });

  it('accepts a valid role list', async () => {
    const result = await applyCluster(server.kubeconfigPath, dir, ns, 'roles', {
      roles: [
        { name: 'readers' },
        { name: 'alice', login: true, inRoles: ['readers'], validUntil: '2027-01-01T00:00:00Z', connectionLimit: 10, passwordSecret: { name: 'alice' } },
      ],
    });
    assert.equal(result.ok, true, result.output);
  });

  it('refuses reserved database names, duplicate extensions and a changed name, and shows the printer columns', async () => {
    for (const name of ['postgres', 'template1']) {
      const result = await applyDatabase('reserved', { cluster: 'c', name, owner: 'app' });
      assert.equal(result.ok, false);
      assert.match(result.output, /spec\.name: Invalid value: "string": postgres, template0 and template1 are kept/);
    }
    const duplicate = await applyDatabase('dup', { cluster: 'c', name: 'shop', owner: 'app', extensions: [{ name: 'citext' }, { name: 'citext' }] });
    assert.match(duplicate.output, /spec\.extensions\[1\]: Duplicate value/);
    assert.equal((await applyDatabase('shop', { cluster: 'c', name: 'shop', owner: 'app', reclaimPolicy: 'delete' })).ok, true);
    const renamed = await applyDatabase('shop', { cluster: 'c', name: 'store', owner: 'app' });
    assert.match(renamed.output, /spec\.cluster and spec\.name cannot change after creation/);
    const table = await kubectl(server.kubeconfigPath, dir, 'get', 'kdb', '-n', ns);
    assert.match(table, /NAME\s+CLUSTER\s+PG NAME\s+APPLIED\s+MESSAGE\s+AGE/);
    assert.match(table, /shop\s+c\s+shop/);
  });
});
