import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { volumesSection } from '../../../../sidecar/ha-node/disk/document.js';
import {
  diskWarnings,
  fullVolume,
  isFull,
  measureVolumes,
  publishedUsage,
  renderVolumeMetrics,
  type VolumeUsage,
} from '../../../../sidecar/ha-node/disk/usage.js';
import { raceVerdict } from '../../../../sidecar/ha-node/ha/election/election.js';
import { defaultConfig } from '../../../../sidecar/ha-node/ha/settings.js';
import type { ClusterView } from '../../../../sidecar/ha-node/dcs/types.js';

const mi = 1024 * 1024;
const usage = (usedMi: number, capacityMi = 64, volume: VolumeUsage['volume'] = 'data'): VolumeUsage => ({
  volume,
  capacityBytes: capacityMi * mi,
  usedBytes: usedMi * mi,
  freeBytes: (capacityMi - usedMi) * mi,
});

describe('volume usage', () => {
  it('says nothing below 90 %, warns from 90 %, and calls a volume full below 4 MiB free or from 99 %', () => {
    assert.deepEqual(diskWarnings([usage(50)]), []);
    assert.match(diskWarnings([usage(58)])[0]!, /^data volume 91% used \(58\.0 MiB of 64\.0 MiB, 6\.0 MiB free\): nearly full/);
    assert.equal(isFull(usage(58)), false);
    assert.equal(isFull(usage(61)), true, '3 MiB free');
    assert.match(diskWarnings([usage(61)])[0]!, /full, PostgreSQL cannot write; grow the volume/);
    assert.equal(isFull(usage(1000, 1024 * 1024)), false);
    assert.equal(isFull(usage(0.995 * 1024 * 1024, 1024 * 1024)), true, '99.5 % of 1 TiB');
    assert.match(fullVolume([usage(10), usage(63, 64, 'wal')])!, /^wal volume/);
    assert.equal(fullVolume([usage(10)]), undefined);
  });

  it('publishes used bytes rounded up to a hundredth of the capacity, so the member record changes seldom', () => {
    const [a] = publishedUsage([usage(10.001)]);
    const [b] = publishedUsage([usage(10.2)]);
    assert.deepEqual(a, b);
    assert.equal(a!.used_bytes + a!.free_bytes, 64 * mi);
    assert.equal(publishedUsage([usage(62)])[0]!.full, true);
  });

  it('renders ha_volume_* per volume with the member labels', () => {
    const text = renderVolumeMetrics([usage(16), usage(62, 64, 'wal')], '{scope="demo",name="demo-0"}');
    assert.match(text, /^ha_volume_capacity_bytes\{scope="demo",name="demo-0",volume="data"\} 67108864$/m);
    assert.match(text, /^ha_volume_free_bytes\{scope="demo",name="demo-0",volume="data"\} 50331648$/m);
    assert.match(text, /^ha_volume_full\{scope="demo",name="demo-0",volume="wal"\} 1$/m);
    assert.match(text, /^# TYPE ha_volume_used_bytes gauge$/m);
  });

  it('puts usage, warnings and disk_full in the node document', () => {
    assert.deepEqual(volumesSection(undefined), {});
    const section = volumesSection([usage(63)]);
    assert.equal(section.disk_full, true);
    assert.equal(section.disk_warnings?.length, 1);
    assert.deepEqual(section.volumes, [{ volume: 'data', capacity_bytes: 64 * mi, used_bytes: 63 * mi, free_bytes: mi }]);
  });

  it('measures the data volume, and pg_wal only when it is another filesystem', { skip: process.getuid?.() !== 0 && 'mounting needs root' }, () => {
    const dir = mkdtempSync(join(tmpdir(), 'keelson-usage-'));
    const walVolume = join(dir, 'wal');
    try {
      mkdirSync(join(dir, 'data', 'pgdata', 'pg_wal'), { recursive: true });
      assert.deepEqual(
        measureVolumes(join(dir, 'data', 'pgdata')).map((v) => v.volume),
        ['data'],
        'pg_wal on the same filesystem',
      );
      mkdirSync(walVolume);
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=8m', 'keelson-test', walVolume]);
      rmSync(join(dir, 'data', 'pgdata', 'pg_wal'), { recursive: true });
      symlinkSync(walVolume, join(dir, 'data', 'pgdata', 'pg_wal'));
      writeFileSync(join(walVolume, 'segment'), Buffer.alloc(5 * mi));
      const [, wal] = measureVolumes(join(dir, 'data', 'pgdata'));
      assert.equal(wal?.volume, 'wal');
      assert.equal(wal?.capacityBytes, 8 * mi);
      assert.ok(wal!.usedBytes >= 5 * mi);
      assert.deepEqual(
        measureVolumes(join(dir, 'not', 'yet')).map((v) => v.volume),
        ['data'],
        'a data directory not made yet: its closest parent',
      );
    } finally {
      execFileSync('umount', [walVolume]);
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('a replica with a full volume in the leader race', () => {
  const cluster: ClusterView = { members: [], history: [], leaderRecord: { optime: 10_000 } } as unknown as ClusterView;
  const self = { name: 'b', walPosition: 9_990, timeline: 1, nofailover: false, isPrimary: false };

  it('does not race, even when named, and does not stop a healthy peer by being ahead', () => {
    const verdict = raceVerdict({ ...self, fullVolume: 'data volume 99% used' }, cluster, defaultConfig, []);
    assert.equal(verdict.ok, false);
    assert.match(verdict.ok ? '' : verdict.reason, /a replica with a full volume does not take the lock/);
    assert.equal(raceVerdict({ ...self, fullVolume: 'x' }, { ...cluster, failover: { member: 'b' } }, defaultConfig, []).ok, false);
    const fullAhead = { name: 'c', reachable: true, role: 'replica', state: 'running', walPosition: 9_999, diskFull: true };
    assert.equal(raceVerdict(self, cluster, defaultConfig, [fullAhead]).ok, true);
    assert.equal(raceVerdict(self, cluster, defaultConfig, [{ ...fullAhead, diskFull: false }]).ok, false);
    assert.equal(
      raceVerdict(self, { ...cluster, failover: { member: 'c' } }, defaultConfig, [fullAhead]).ok,
      true,
      'a named candidate with a full disk leaves the race open',
    );
  });
});
