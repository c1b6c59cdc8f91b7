import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runningPid } from '../../../local/cluster/up.js';

test('runningPid: a live pid is returned; a missing file, garbage or an exited process means nothing runs', () => {
  const dir = mkdtempSync(join(tmpdir(), 'keelson-pid-'));
  try {
    assert.equal(runningPid(dir), undefined, 'no pid file (or one removed between two looks) is not an error');
    writeFileSync(join(dir, 'pid'), `${process.pid}\n`);
    assert.equal(runningPid(dir), process.pid);
    writeFileSync(join(dir, 'pid'), 'not a pid\n');
    assert.equal(runningPid(dir), undefined);
    // Beyond the kernel's pid_max (at most 2^22 on Linux): no such process.
    writeFileSync(join(dir, 'pid'), `${2 ** 22 + 1}\n`);
    assert.equal(runningPid(dir), undefined);
    assert.equal(runningPid(dir, join(dir, 'forward', 'pid')), undefined, 'a pid file in a missing folder');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
