import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { backupCrd } from '../../../api/crd/crd.js';
import { parseDatabaseCluster } from '../../../api/crd/validate.js';
import { buildScheduledBackup } from '../../../operator/builders/backup-object.js';
import { backupsOf, completedStatus, followRunning, repositoryIndex } from '../../../operator/reconcile/backup-objects.js';
import { setStartedSince, type StanzaInfo } from '../../../sidecar/ha-node/backup/info.js';
import type { RawCluster } from '../../../operator/kube-api.js';

/** The Backup kind's pure parts: its CRD, the object a schedule creates, and how a run is followed. */

const cluster = parseDatabaseCluster({
  apiVersion: 'keelson.io/v1',
  kind: 'DatabaseCluster',
  metadata: { name: 'shop', namespace: 'prod', uid: 'u1' },
  spec: {
    backup: {
      repositories: [
        { name: 'local', volume: {} },
        { name: 'far', volume: {} },
      ],
    },
  },
});

describe('the Backup kind', () => {
  it('has a CRD with the short name kbk, a status subresource, an immutable spec and printer columns', () => {
    const crd = backupCrd();
    assert.equal(crd.metadata?.name, 'backups.keelson.io');
    assert.deepEqual(crd.spec.names.shortNames, ['kbk']);
    const v1 = crd.spec.versions[0]!;
    assert.deepEqual(v1.subresources, { status: {} });
    assert.deepEqual(
      v1.additionalPrinterColumns?.map((c) => c.name),
      ['Cluster', 'Type', 'Phase', 'Label', 'Member', 'Size', 'Stopped', 'Age'],
    );
    const spec = (
      v1.schema!.openAPIV3Schema!.properties as Record<
        string,
        { 'x-kubernetes-validations'?: { rule: string }[]; properties?: Record<string, { enum?: string[] }> }
      >
    ).spec!;
    assert.deepEqual(
      spec['x-kubernetes-validations']?.map((r) => r.rule),
      ['self == oldSelf'],
    );
    assert.deepEqual(spec.properties?.type?.enum, ['full', 'diff', 'incr']);
    const status = (v1.schema!.openAPIV3Schema!.properties as Record<string, { properties: Record<string, unknown> }>).status!;
    for (const field of [
      'phase',
      'startedAt',
      'stoppedAt',
      'label',
      'lsnStart',
      'lsnStop',
      'timeline',
      'systemIdentifier',
      'sizeBytes',
      'repoSizeBytes',
      'member',
      'message',
    ]) {
      assert.ok(status.properties[field], `status.${field}`);
    }
  });

  it('a schedule creates one object per cron time (UTC minute in the name), without an owner: deleting the cluster keeps them', () => {
    const ctx = { cluster, operatorVersion: '1.0.0' };
    const scheduled = buildScheduledBackup(ctx, 'incr', { schedule: 'incremental', dueAt: '2026-11-25T03:15:00.000Z' });
    assert.equal(scheduled.metadata.name, 'shop-incr-202611250315');
    assert.deepEqual(scheduled.spec, { cluster: 'shop', type: 'incr' });
    assert.equal(scheduled.metadata.labels?.['keelson.io/cluster'], 'shop');
    assert.equal((scheduled.metadata as { ownerReferences?: unknown }).ownerReferences, undefined);
    assert.equal(buildScheduledBackup(ctx, 'full', 'initial').metadata.name, 'shop-initial');
  });

  it("keeps only this cluster's objects with a valid spec, oldest first", () => {
    const raw = (name: string, spec: unknown, at: string) => ({ metadata: { name, namespace: 'prod', creationTimestamp: at }, spec }) as unknown as RawCluster;
    const listed = backupsOf(
      [
        raw('b', { cluster: 'shop' }, '2026-01-02T00:00:00Z'),
        raw('a', { cluster: 'shop', type: 'incr' }, '2026-01-01T00:00:00Z'),
        raw('c', { cluster: 'other' }, '2026-01-01T00:00:00Z'),
        raw('d', { cluster: 'shop', type: 'weekly' }, '2026-01-01T00:00:00Z'),
      ],
      'shop',
    );
    assert.deepEqual(
      listed.map((b) => [b.metadata.name, b.spec.type]),
      [
        ['a', 'incr'],
        ['b', 'full'],
      ],
    );
  });

  it('maps spec.repository to its position, or a message naming the field', () => {
    const backup = cluster.spec.backup!;
    assert.equal(repositoryIndex(backup, undefined), 1);
    assert.equal(repositoryIndex(backup, 'far'), 2);
    assert.match(
      String(repositoryIndex(backup, 'nope')),
      /^spec\.repository: the cluster has no repository named "nope" \(spec\.backup\.repositories: local, far\)/,
    );
  });

  it('follows a running backup by the start time ha-node answered: running, finished with its set, or lost', () => {
    const status = { phase: 'Running' as const, startedAt: '2026-11-25T03:00:00.123Z', member: 'shop-1' };
    const now = new Date('2026-11-25T03:05:00Z');
    assert.equal(followRunning(status, { running: { type: 'full', startedAt: status.startedAt } }, now), undefined);
    const set = {
      label: '20261125-030000F',
      type: 'full',
      stoppedAt: '2026-11-25T03:01:00.000Z',
      lsnStart: '0/2000028',
      lsnStop: '0/2000100',
      timeline: 1,
      systemIdentifier: '7300',
      sizeBytes: 30_000_000,
      repoSizeBytes: 4_000_000,
    };
    const done = followRunning(
      status,
      { lastBackup: { ok: true, message: 'full backup finished', at: '2026-11-25T03:01:01Z', type: 'full', startedAt: status.startedAt, set } },
      now,
    )!;
    assert.deepEqual(done, {
      ...status,
      phase: 'Completed',
      label: set.label,
      lsnStart: set.lsnStart,
      lsnStop: set.lsnStop,
      timeline: 1,
      systemIdentifier: '7300',
      sizeBytes: 30_000_000,
      repoSizeBytes: 4_000_000,
      stoppedAt: set.stoppedAt,
      message: 'full backup finished',
    });
    const failed = followRunning(
      status,
      { lastBackup: { ok: false, message: 'pgbackrest backup failed (exit 82)', at: '2026-11-25T03:01:01Z', type: 'full', startedAt: status.startedAt } },
      now,
    )!;
    assert.equal(failed.phase, 'Failed');
    assert.equal(failed.stoppedAt, '2026-11-25T03:01:01Z');
    // Another backup's outcome (ha-node restarted and ran a different one) does not complete this one.
    const lost = followRunning(
      status,
      { lastBackup: { ok: true, message: 'x', at: '2026-11-25T03:04:00Z', type: 'full', startedAt: '2026-11-25T03:03:00Z' } },
      now,
    )!;
    assert.equal(lost.phase, 'Failed');
    assert.match(lost.message!, /shop-1 no longer knows this backup/);
    assert.equal(completedStatus({}, undefined, true, 'm'.repeat(2000), 'at').message!.length, 1000);
  });

  it('ha-node finds the set it just took by its start second, in the repository it used', () => {
    const set = (label: string, repository: number, startedAt: string) => ({
      label,
      type: 'full' as const,
      repository,
      startedAt,
      stoppedAt: startedAt,
      error: false,
    });
    const info: StanzaInfo = {
      stanza: 's',
      code: 0,
      message: 'ok',
      wal: [],
      repositories: [],
      backups: [set('old', 1, '2026-11-25T02:00:00.000Z'), set('other-repo', 2, '2026-11-25T03:00:00.000Z'), set('ours', 1, '2026-11-25T03:00:00.000Z')],
    };
    assert.equal(setStartedSince(info, 1, '2026-11-25T03:00:00.640Z')?.label, 'ours', 'pgBackRest keeps whole seconds');
    assert.equal(setStartedSince(info, 1, '2026-11-25T03:00:01.000Z'), undefined);
  });
});
