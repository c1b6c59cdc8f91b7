import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { stringify } from 'yaml';
import { startTestApiServer, type TestApiServer } from '../../support/kube.js';
import { applyCluster, applyCrds, kubectl } from '../support.js';

const ns = 'backups';
const s3 = { bucket: 'backups', endpoint: 'minio.example', credentialsSecret: { name: 's3-creds' } };

/** spec.backup and spec.bootstrap.recovery as `kubectl apply` meets them: refusals name the field. */
describe('DatabaseCluster backup admission through kubectl apply (generated CRD on the stand-in)', () => {
  let server: TestApiServer;
  let dir: string;

  before(async () => {
    server = await startTestApiServer();
    dir = mkdtempSync(join(tmpdir(), 'keelson-backup-admission-'));
    assert.equal(await applyCrds(server.kubeconfigPath, dir), true);
    await kubectl(server.kubeconfigPath, dir, 'create', 'namespace', ns);
  });

  after(async () => {
    await server?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const apply = (name: string, spec: Record<string, unknown>) => applyCluster(server.kubeconfigPath, dir, ns, name, spec);

  it('refuses a bad cron schedule at apply time, naming the field', async () => {
    for (const [field, value] of [
      ['full', '0 25 * * *'],
      ['incremental', '@hourly'],
      ['differential', '* * * *'],
    ] as const) {
      const result = await apply('cron', { backup: { repositories: [{ name: 'main', s3 }], schedules: { [field]: value } } });
      assert.equal(result.ok, false, `${field}=${value} accepted`);
      assert.match(result.output, new RegExp(`spec\\.backup\\.schedules\\.${field}`));
    }
  });

  it('refuses a repository with both or neither kind, and retention with both count and window', async () => {
    const both = await apply('kinds', { backup: { repositories: [{ name: 'main', s3, volume: { size: '1Gi' } }] } });
    assert.equal(both.ok, false);
    assert.match(both.output, /spec\.backup\.repositories\[0\].*set exactly one of s3 or volume/);
    const neither = await apply('kinds', { backup: { repositories: [{ name: 'main' }] } });
    assert.equal(neither.ok, false);
    assert.match(neither.output, /set exactly one of s3 or volume/);
    const retention = await apply('kinds', { backup: { repositories: [{ name: 'main', s3 }], retention: { fullCount: 2, windowDays: 7 } } });
    assert.equal(retention.ok, false);
    assert.match(retention.output, /spec\.backup\.retention.*set fullCount or windowDays, not both/);
  });

  it('refuses a recovery from a repository that is not listed, and a target time without a zone', async () => {
    const unknown = await apply('restored', {
      backup: { repositories: [{ name: 'main', s3 }] },
      bootstrap: { recovery: { source: { cluster: 'old' }, repository: 'other' } },
    });
    assert.equal(unknown.ok, false);
    assert.match(unknown.output, /bootstrap\.recovery\.repository must name one of backup\.repositories/);
    const zoneless = await apply('restored', {
      backup: { repositories: [{ name: 'main', s3 }] },
      bootstrap: { recovery: { source: { cluster: 'old' }, repository: 'main', targetTime: '2026-01-01 10:00' } },
    });
    assert.equal(zoneless.ok, false);
    assert.match(zoneless.output, /spec\.bootstrap\.recovery\.targetTime/);
  });

  it('refuses two recovery targets at once and a malformed LSN or xid, naming the field', async () => {
    const recovery = (target: Record<string, unknown>) => ({
      backup: { repositories: [{ name: 'main', s3 }] },
      bootstrap: { recovery: { source: { cluster: 'old' }, repository: 'main', ...target } },
    });
    const two = await apply('targets', recovery({ targetTime: '2026-01-01T10:00:00Z', targetLSN: '0/3000060' }));
    assert.equal(two.ok, false);
    assert.match(two.output, /spec\.bootstrap\.recovery.*set at most one of targetTime, targetLSN, targetName, targetXID, targetImmediate/);
    const lsn = await apply('targets', recovery({ targetLSN: '3000060' }));
    assert.equal(lsn.ok, false);
    assert.match(lsn.output, /spec\.bootstrap\.recovery\.targetLSN/);
    const xid = await apply('targets', recovery({ targetXID: '-5' }));
    assert.equal(xid.ok, false);
    assert.match(xid.output, /spec\.bootstrap\.recovery\.targetXID/);
    const immediateOff = await apply('targets', recovery({ targetTime: '2026-01-01T10:00:00Z', targetImmediate: false, exclusive: false }));
    assert.equal(immediateOff.ok, true, immediateOff.output);
  });

  it('Backup objects: the type must be full, diff or incr, the spec cannot change, kbk lists them', async () => {
    const file = join(dir, 'backup.yaml');
    const write = (spec: Record<string, unknown>) =>
      writeFileSync(file, stringify({ apiVersion: 'keelson.io/v1', kind: 'Backup', metadata: { name: 'nightly', namespace: ns }, spec }));
    write({ cluster: 'shop', type: 'weekly' });
    const refused = await kubectl(server.kubeconfigPath, dir, 'apply', '-f', file).then(
      () => '',
      (err: { stderr?: string }) => String(err.stderr),
    );
    assert.match(refused, /spec\.type/);
    write({ cluster: 'shop', type: 'incr' });
    await kubectl(server.kubeconfigPath, dir, 'apply', '-f', file);
    write({ cluster: 'shop', type: 'full' });
    const changed = await kubectl(server.kubeconfigPath, dir, 'apply', '-f', file).then(
      () => '',
      (err: { stderr?: string }) => String(err.stderr),
    );
    assert.match(changed, /spec is immutable: create another Backup/);
    const table = await kubectl(server.kubeconfigPath, dir, '-n', ns, 'get', 'kbk');
    assert.match(table, /^NAME\s+CLUSTER\s+TYPE\s+PHASE\s+LABEL\s+STOPPED\s+AGE\s*\nnightly\s+shop\s+incr\s/);
  });

  it('accepts a complete backup and recovery spec', async () => {
    const good = await apply('restored', {
      backup: {
        repositories: [
          { name: 'main', s3: { ...s3, caSecret: { name: 's3-ca' } } },
          { name: 'local', volume: { size: '1Gi' } },
        ],
        schedules: { full: '0 3 * * 0', incremental: '*/30 * * * *' },
        retention: { fullCount: 2 },
      },
      bootstrap: { recovery: { source: { cluster: 'old' }, repository: 'main', targetTime: '2026-01-01T10:00:00Z' } },
    });
    assert.equal(good.ok, true, good.output);
  });
});
