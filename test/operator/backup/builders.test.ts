import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseDatabaseCluster, InvalidSpecError } from '../../../api/crd/validate.js';
import { buildBackupClaims, haNodeBackupSettings } from '../../../operator/builders/backup.js';
import { buildStatefulSet } from '../../../operator/builders/statefulset.js';
import { haNodeConfig } from '../../../operator/builders/configmap.js';
import { Annotations } from '../../../api/naming.js';
import { buildBackupTlsSecret, readBackupTlsSecret } from '../../../operator/builders/backup-tls.js';
import { backupVerdict, dueSchedule } from '../../../operator/reconcile/backup.js';
import { backupMember, expiredBackups } from '../../../operator/reconcile/backup-objects.js';
import type { BackupObject } from '../../../api/crd/backup-kind.js';
import { parseBackupConfig } from '../../../api/ha-node/backup-settings.js';
import { demoSpec } from '../../../local/cluster/up.js';

const s3 = { bucket: 'backups', endpoint: 'minio.example', port: 9000, uriStyle: 'path', credentialsSecret: { name: 's3-creds' }, caSecret: { name: 's3-ca' } };

function cluster(spec: Record<string, unknown>, name = 'shop') {
  return parseDatabaseCluster({ apiVersion: 'keelson.io/v1', kind: 'DatabaseCluster', metadata: { name, namespace: 'prod', uid: 'u1' }, spec });
}

describe('backup builders', () => {
  it('gives ha-node settings it accepts: own stanza per cluster under <path>/<namespace>/<cluster>, files from the mounted Secrets', () => {
    const ctx = {
      cluster: cluster({
        backup: {
          repositories: [
            { name: 'main', s3 },
            { name: 'local', volume: { size: '1Gi' } },
          ],
          retention: { fullCount: 3 },
          processMax: 4,
        },
      }),
      operatorVersion: '1.0.0',
    };
    const settings = haNodeBackupSettings(ctx)!;
    const parsed = parseBackupConfig(JSON.stringify(settings));
    assert.equal(parsed.stanza, 'shop');
    assert.deepEqual(parsed.repositories[0], {
      kind: 's3',
      bucket: 'backups',
      endpoint: 'minio.example',
      port: 9000,
      region: 'us-east-1',
      path: '/keelson/prod/shop',
      uriStyle: 'path',
      verifyTls: true,
      caFile: '/etc/keelson-backup/main-ca/ca.crt',
      keyFile: '/etc/keelson-backup/main/accessKeyId',
      secretKeyFile: '/etc/keelson-backup/main/secretAccessKey',
    });
    assert.deepEqual(parsed.repositories[1], { kind: 'posix', path: '/var/lib/keelson-backup/local/prod/shop' });
    assert.equal(parsed.processMax, 4);
    const sts = buildStatefulSet(ctx);
    const container = sts.spec!.template.spec!.containers[0]!;
    assert.deepEqual(haNodeConfig(ctx).backup, settings, 'the settings document carries them');
    assert.equal(
      container.env!.some((e) => e.name === 'KEELSON_BACKUP'),
      false,
      'no second copy in the environment',
    );
    const digest = (spec: Record<string, unknown>) =>
      buildStatefulSet({ ...ctx, cluster: cluster(spec) }).spec!.template.metadata!.annotations![Annotations.haNodeStartSettingsHash];
    assert.equal(
      digest({ backup: { repositories: [{ name: 'local', volume: { size: '1Gi' } }] } }),
      digest({ backup: { repositories: [{ name: 'local', volume: { size: '1Gi' } }] }, ha: { ttl: 40 } }),
      'a dynamic setting never rolls the pods',
    );
    assert.notEqual(
      digest({ backup: { repositories: [{ name: 'local', volume: { size: '1Gi' } }] } }),
      digest({ backup: { repositories: [{ name: 'local', volume: { size: '1Gi' } }], processMax: 5 } }),
      'a backup setting (read at start) rolls them',
    );
    assert.doesNotMatch(JSON.stringify(container.env), /secretAccessKey"?:\s*"[^/]/, 'no credential value in the environment');
    const volumes = sts.spec!.template.spec!.volumes!;
    assert.equal(volumes.find((v) => v.name === 'backup-main')?.secret?.secretName, 's3-creds');
    assert.equal(volumes.find((v) => v.name === 'backup-main-ca')?.secret?.secretName, 's3-ca');
    assert.equal(volumes.find((v) => v.name === 'backup-local')?.persistentVolumeClaim?.claimName, 'keelson-backup-local');
    assert.ok(container.volumeMounts!.some((m) => m.mountPath === '/var/lib/keelson-backup/local'));
    const [claim] = buildBackupClaims(ctx);
    assert.equal(claim!.metadata!.ownerReferences, undefined, 'the repository outlives the cluster');
    assert.deepEqual(claim!.spec!.accessModes, ['ReadWriteMany']);
  });

  it('points a restored cluster at the source stanza in the named repository, and its own stanza elsewhere', () => {
    const ctx = {
      cluster: cluster(
        {
          backup: { repositories: [{ name: 'main', s3 }] },
          bootstrap: { recovery: { source: { cluster: 'shop' }, repository: 'main', targetTime: '2026-01-01T10:00:00Z' } },
        },
        'shop-restored',
      ),
      operatorVersion: '1.0.0',
    };
    const parsed = parseBackupConfig(JSON.stringify(haNodeBackupSettings(ctx)));
    assert.equal(parsed.stanza, 'shop-restored');
    assert.equal(parsed.repositories[0]!.path, '/keelson/prod/shop-restored');
    assert.equal(parsed.recovery?.stanza, 'shop');
    assert.equal(parsed.recovery?.repository.path, '/keelson/prod/shop');
    assert.equal(parsed.recovery?.target.time, '2026-01-01T10:00:00Z');
  });

  it('refuses a recovery into the source cluster itself and duplicate repository names, naming the field', () => {
    assert.throws(
      () => cluster({ backup: { repositories: [{ name: 'main', s3 }] }, bootstrap: { recovery: { source: { cluster: 'shop' }, repository: 'main' } } }),
      (e: unknown) => e instanceof InvalidSpecError && /spec\.bootstrap\.recovery\.source\.cluster/.test(e.message),
    );
    assert.throws(
      () =>
        cluster({
          backup: {
            repositories: [
              { name: 'main', s3 },
              { name: 'main', volume: {} },
            ],
          },
        }),
      /names must be unique/,
    );
    assert.throws(() => cluster({ backup: { repositories: [{ name: 'main', s3 }], schedules: { full: '61 * * * *' } } }), /spec\.backup\.schedules\.full/);
  });

  it('gives the local demo a filesystem repository that parses', () => {
    const parsed = cluster(demoSpec(2), 'demo');
    assert.equal(parsed.spec.backup?.repositories[0]?.volume?.size, '2Gi');
  });
});

describe('BackupReady and schedules', () => {
  it('names the reason: missing Secret, failed restore, unreachable repository, pending, ready', () => {
    assert.deepEqual(
      backupVerdict(['Secret s3-creds (spec.backup.repositories[0].s3.credentialsSecret) not found'], 'shop-0', undefined, undefined).reason,
      'SecretMissing',
    );
    assert.equal(
      backupVerdict([], undefined, { restore: { ok: false, message: 'recovery.target.time: too early', at: '' } }, undefined).reason,
      'RestoreFailed',
    );
    const unreachable = backupVerdict([], 'shop-0', { stanzaReady: false, archive: { ok: false, message: 'HTTP 403', at: '' } }, undefined);
    assert.deepEqual([unreachable.status, unreachable.reason, unreachable.message], ['False', 'RepositoryUnreachable', 'HTTP 403']);
    assert.equal(backupVerdict([], 'shop-0', { stanzaReady: false }, undefined).status, 'Unknown');
    assert.equal(backupVerdict([], 'shop-0', undefined, 'timeout').reason, 'HaNodeUnreachable');
    assert.equal(backupVerdict([], 'shop-0', { stanzaReady: true }, undefined).status, 'True');
    assert.equal(
      backupVerdict([], 'shop-0', { stanzaReady: true, lastBackup: { ok: false, message: 'disk full', at: '', type: 'full' } }, undefined).reason,
      'BackupFailed',
    );
  });

  it('runs a schedule once per cron time, full before incremental', () => {
    const spec = cluster({ backup: { repositories: [{ name: 'main', s3 }], schedules: { full: '0 3 * * *', incremental: '*/10 * * * *' } } }).spec.backup!;
    const created = new Date('2026-01-01T00:00:00Z');
    assert.deepEqual(dueSchedule(spec, {}, created, new Date('2026-01-01T03:05:00Z')), { kind: 'full', dueAt: '2026-01-01T03:00:00.000Z' });
    assert.deepEqual(dueSchedule(spec, { full: '2026-01-01T03:00:00.000Z' }, created, new Date('2026-01-01T03:05:00Z')), {
      kind: 'incremental',
      dueAt: '2026-01-01T03:00:00.000Z',
    });
    assert.equal(
      dueSchedule(spec, { full: '2026-01-01T03:00:00.000Z', incremental: '2026-01-01T03:00:00.000Z' }, created, new Date('2026-01-01T03:09:59Z')),
      undefined,
    );
    assert.equal(
      dueSchedule(spec, {}, new Date('2026-01-01T03:06:00Z'), new Date('2026-01-01T03:09:00Z')),
      undefined,
      'nothing due from before the cluster existed',
    );
  });
});

describe('backups on a standby (target prefer-standby)', () => {
  const pod = (name: string, ip: string, deleting = false) => ({
    metadata: { name, ...(deleting ? { deletionTimestamp: new Date() } : {}) },
    status: { podIP: ip },
  });
  const pods = [pod('shop-0', '10.0.0.1'), pod('shop-1', '10.0.0.2'), pod('shop-2', '10.0.0.3')];
  const primary = { name: 'shop-0', host: '10.0.0.1' };

  it('mounts the cluster CA, opens the TLS server port and tells ha-node, only with prefer-standby', () => {
    const ctx = {
      cluster: cluster({ backup: { repositories: [{ name: 'local', volume: { size: '1Gi' } }], target: 'prefer-standby' } }),
      operatorVersion: '1.0.0',
    };
    const parsed = parseBackupConfig(JSON.stringify(haNodeBackupSettings(ctx)));
    assert.deepEqual(parsed.tlsServer, { caFile: '/etc/keelson-backup-tls/ca.crt', caKeyFile: '/etc/keelson-backup-tls/ca.key', port: 8432, checkSeconds: 30 });
    const spec = buildStatefulSet(ctx).spec!.template.spec!;
    assert.equal(spec.volumes!.find((v) => v.name === 'backup-tls')?.secret?.secretName, 'shop-backup-tls');
    // Only the signing pair is mounted: a staged CA's key stays in the Secret until it signs.
    assert.deepEqual(
      spec.volumes!.find((v) => v.name === 'backup-tls')?.secret?.items?.map((i) => i.key),
      ['ca.crt', 'ca.key'],
    );
    const staged = { cert: 'A', key: 'K', nextCert: 'B', nextKey: 'L', stagedAt: '2026-11-28T09:00:00.000Z' };
    const secret = buildBackupTlsSecret(ctx, staged);
    assert.deepEqual(Object.keys(secret.data!).sort(), ['ca.crt', 'ca.key', 'next.crt', 'next.key']);
    assert.deepEqual(readBackupTlsSecret(secret), staged);
    assert.deepEqual(Object.keys(buildBackupTlsSecret(ctx, { cert: 'A', key: 'K' }).data!).sort(), ['ca.crt', 'ca.key']);
    assert.ok(spec.containers[0]!.volumeMounts!.some((m) => m.mountPath === '/etc/keelson-backup-tls' && m.readOnly));
    assert.ok(spec.containers[0]!.ports!.some((p) => p.containerPort === 8432));
    const onPrimary = { cluster: cluster({ backup: { repositories: [{ name: 'local', volume: { size: '1Gi' } }] } }), operatorVersion: '1.0.0' };
    assert.equal(onPrimary.cluster.spec.backup!.target, 'primary', 'the default');
    assert.equal(parseBackupConfig(JSON.stringify(haNodeBackupSettings(onPrimary))).tlsServer, undefined);
    assert.ok(!buildStatefulSet(onPrimary).spec!.template.spec!.volumes!.some((v) => v.name === 'backup-tls'));
    assert.throws(() => cluster({ backup: { repositories: [{ name: 'local', volume: { size: '1Gi' } }], target: 'standby' } }), /spec\.backup\.target/);
  });

  it('picks the streaming standby with the least lag, else the primary', () => {
    const members = [
      { name: 'shop-0', role: 'primary', state: 'running' },
      { name: 'shop-1', role: 'replica', state: 'streaming', lag: 4096 },
      { name: 'shop-2', role: 'sync_standby', state: 'streaming', lag: 0 },
    ];
    assert.deepEqual(backupMember('prefer-standby', primary, pods, members), { name: 'shop-2', host: '10.0.0.3' });
    assert.deepEqual(backupMember('primary', primary, pods, members), primary, 'target primary');
    assert.deepEqual(backupMember('prefer-standby', primary, pods, undefined), primary, 'members unknown');
    const notStreaming = members.map((m) => (m.role === 'primary' ? m : { ...m, state: 'starting' }));
    assert.deepEqual(backupMember('prefer-standby', primary, pods, notStreaming), primary, 'no standby streams');
    const leaving = [pods[0]!, pods[1]!, pod('shop-2', '10.0.0.3', true)];
    assert.deepEqual(backupMember('prefer-standby', primary, leaving, members), { name: 'shop-1', host: '10.0.0.2' }, 'a pod being deleted is passed over');
    assert.deepEqual(backupMember('prefer-standby', primary, [pods[0]!], members), primary, 'a standby without a pod address');
  });
});

describe('Backups that retention removed', () => {
  const object = (name: string, label: string | undefined, phase: string, repositoryIndex?: number) =>
    ({
      apiVersion: 'keelson.io/v1',
      kind: 'Backup',
      metadata: { name, namespace: 'prod' },
      spec: { cluster: 'shop', type: 'full' },
      status: { phase, ...(label ? { label } : {}), ...(repositoryIndex ? { repositoryIndex } : {}) },
    }) as unknown as BackupObject;
  const objects = [
    object('old', '20260101-010000F', 'Completed'),
    object('kept', '20260102-010000F', 'Completed', 1),
    object('elsewhere', '20260101-020000F', 'Completed', 2),
    object('failed', undefined, 'Failed'),
    object('running', undefined, 'Running'),
  ];

  it('are the Completed ones whose set a completely listed repository no longer has, beside a newer set', () => {
    const info = {
      backups: [{ label: '20260102-010000F', type: 'full', repository: 1, stoppedAt: '' }],
      repositories: [
        { repository: 1, code: 0, message: 'ok' },
        { repository: 2, code: 99, message: 'unreachable' },
      ],
    };
    assert.deepEqual(
      expiredBackups(objects, info).map((b) => b.metadata.name),
      ['old'],
      'an unreachable repository expires nothing',
    );
    const bothListed = {
      ...info,
      repositories: [
        { repository: 1, code: 0, message: 'ok' },
        { repository: 2, code: 2, message: 'no valid backups' },
      ],
    };
    assert.deepEqual(
      expiredBackups(objects, bothListed).map((b) => b.metadata.name),
      ['old'],
      'retention keeps the newest set: an empty repository was not emptied by it',
    );
    const elsewhereNewer = {
      backups: [...info.backups, { label: '20260101-030000F', type: 'full', repository: 2, stoppedAt: '' }],
      repositories: bothListed.repositories,
    };
    assert.deepEqual(
      expiredBackups(objects, elsewhereNewer).map((b) => b.metadata.name),
      ['old', 'elsewhere'],
    );
    // A listing read before the newest backup finished (cached on the primary while the backup ran on a standby).
    const stale = { backups: [{ label: '20260101-010000F', type: 'full', repository: 1, stoppedAt: '' }], repositories: info.repositories };
    const justCompleted = object('just-completed', '20260103-010000F', 'Completed', 1);
    assert.deepEqual(expiredBackups([justCompleted], stale), [], 'a listing older than the backup expires nothing');
    const incremental = object('incremental', '20260102-010000F_20260102-020000I', 'Completed', 1);
    assert.deepEqual(
      expiredBackups([incremental], info).map((b) => b.metadata.name),
      [],
      'an incremental newer than every listed set is not taken for expired',
    );
    assert.deepEqual(
      expiredBackups([incremental], { ...info, backups: [{ label: '20260103-010000F', type: 'full', repository: 1, stoppedAt: '' }] }).map(
        (b) => b.metadata.name,
      ),
      ['incremental'],
    );
    assert.deepEqual(expiredBackups(objects, undefined), [], 'no listing, nothing expires');
    assert.deepEqual(expiredBackups([object('gone', '20260101-010000F', 'Expired')], info), [], 'already Expired');
  });
});
