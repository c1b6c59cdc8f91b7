import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { lstatSync, mkdirSync, mkdtempSync, readFileSync, readlinkSync, rmSync, statfsSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { placeWal } from '../../../../sidecar/ha-node/disk/wal-volume.js';
import { measureVolumes } from '../../../../sidecar/ha-node/disk/usage.js';

describe('pg_wal on its own volume', { skip: process.getuid?.() !== 0 && 'mounting needs root' }, () => {
  it('moves the segments of a fresh data directory to the WAL volume and links pg_wal; then leaves it alone; a new data directory replaces the old segments', () => {
    const dir = mkdtempSync(join(tmpdir(), 'keelson-walvol-'));
    const volume = join(dir, 'wal');
    mkdirSync(volume);
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=8m', 'keelson-test', volume]);
    try {
      const data = join(dir, 'data', 'pgdata');
      const walDir = join(volume, 'pg_wal');
      assert.equal(placeWal(data, walDir), 'no-data-directory');
      mkdirSync(join(data, 'pg_wal', 'archive_status'), { recursive: true });
      writeFileSync(join(data, 'PG_VERSION'), '15\n');
      writeFileSync(join(data, 'pg_wal', '000000010000000000000001'), 'segment one');
      assert.equal(placeWal(data, walDir), 'moved');
      assert.ok(lstatSync(join(data, 'pg_wal')).isSymbolicLink());
      assert.equal(readlinkSync(join(data, 'pg_wal')), walDir);
      assert.equal(readFileSync(join(walDir, '000000010000000000000001'), 'utf8'), 'segment one');
      assert.ok(lstatSync(join(walDir, 'archive_status')).isDirectory());
      assert.equal(statfsSync(join(data, 'pg_wal')).blocks * statfsSync(join(data, 'pg_wal')).bsize, 8 * 1024 * 1024, 'pg_wal is on the WAL volume');
      assert.deepEqual(
        measureVolumes(data).map((v) => v.volume),
        ['data', 'wal'],
      );
      assert.equal(placeWal(data, walDir), 'linked');

      // The data directory is removed and cloned again: the old segments must not stay.
      rmSync(data, { recursive: true });
      mkdirSync(join(data, 'pg_wal'), { recursive: true });
      writeFileSync(join(data, 'PG_VERSION'), '15\n');
      writeFileSync(join(data, 'pg_wal', '000000020000000000000005'), 'segment five');
      assert.equal(placeWal(data, walDir), 'moved');
      assert.deepEqual(execFileSync('ls', [walDir], { encoding: 'utf8' }).trim().split('\n'), ['000000020000000000000005']);
    } finally {
      execFileSync('umount', [volume]);
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
