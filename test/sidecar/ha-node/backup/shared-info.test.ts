import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { serve, type RunningServer } from '../../../../lib/http.js';
import { createHaNodeApp } from '../../../../sidecar/ha-node/api/app.js';
import { createOpsModules } from '../../../../sidecar/ha-node/api/ops/index.js';
import { PgBackRest } from '../../../../sidecar/ha-node/backup/engine.js';
import { BackupKeeper } from '../../../../sidecar/ha-node/backup/keeper.js';
import { parseBackupConfig } from '../../../../api/ha-node/backup-settings.js';
import type { LeaseDcs } from '../../../../sidecar/ha-node/dcs/lease-dcs.js';
import { startTestApiServer, type TestApiServer } from '../../../support/kube.js';
import { dcsFor, quiet, snapshotFor } from '../ops/support.js';

/**
 * GET /backup is open to anyone: a burst of requests shares one `pgbackrest info` (the real
 * pgBackRest, behind a wrapper that counts its starts) instead of starting one process each. A
 * listing held up (an unreachable repository makes pgBackRest retry for over a minute) does not
 * hold up the answer, which the operator reads the archive queue from.
 */
describe('GET /backup under concurrent requests', { timeout: 60_000 }, () => {
  let api: TestApiServer;
  let dcs: LeaseDcs;
  let server: RunningServer;
  let dir: string;
  let starts: string;
  let hold: string;
  let clock = Date.now();

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'keelson-shared-info-'));
    starts = join(dir, 'starts');
    hold = join(dir, 'hold');
    writeFileSync(starts, '');
    const bin = join(dir, 'pgbackrest');
    // Slow enough that the burst overlaps with the first run.
    // While the hold file exists, pgbackrest does not answer (as against an unreachable repository).
    writeFileSync(bin, `#!/bin/sh\necho "$*" >> '${starts}'\nsleep 1\nwhile [ -e '${hold}' ]; do sleep 0.1; done\nexec /usr/bin/pgbackrest "$@"\n`);
    chmodSync(bin, 0o755);
    const config = parseBackupConfig(JSON.stringify({ stanza: 'db', repositories: [{ kind: 'posix', path: join(dir, 'repo') }] }));
    const keeper = new BackupKeeper(
      new PgBackRest({ config, server: { dataDir: join(dir, 'pgdata'), port: 5432, socketDir: dir, user: 'postgres' }, bin }),
      quiet,
      () => clock,
    );
    api = await startTestApiServer();
    dcs = dcsFor(api, 'sharedinfo', 'a');
    const context = { snapshot: snapshotFor('a', 'sharedinfo', dcs), dcs, logger: quiet, wake: () => undefined, backup: keeper, credentials: null };
    server = await serve(createHaNodeApp(context, createOpsModules()), { host: '127.0.0.1', port: 0, logger: quiet, shutdownTimeoutMs: 500 });
  });

  after(async () => {
    await server?.close();
    dcs?.stop();
    await api?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('eight concurrent requests start one pgbackrest info and all get its answer', async () => {
    const base = server.url.replace(/\/$/, '');
    const replies = await Promise.all(
      Array.from({ length: 8 }, () =>
        fetch(`${base}/backup`, { signal: AbortSignal.timeout(30_000) }).then(async (r) => ({
          status: r.status,
          body: (await r.json()) as Record<string, unknown>,
        })),
      ),
    );
    for (const reply of replies) {
      assert.equal(reply.status, 200);
      assert.ok('info' in reply.body || 'infoError' in reply.body, JSON.stringify(reply.body));
    }
    assert.equal(new Set(replies.map((r) => JSON.stringify(r.body))).size, 1, 'one answer shared');
    const lines = readFileSync(starts, 'utf8')
      .split('\n')
      .filter((line) => line.includes('info'));
    assert.equal(lines.length, 1, `pgbackrest info started ${lines.length} times`);
  });

  it('reports the archive queue from pg_wal/archive_status while no server runs (a primary stopped by a full WAL volume)', async () => {
    const status = join(dir, 'pgdata', 'pg_wal', 'archive_status');
    mkdirSync(status, { recursive: true });
    writeFileSync(join(status, '000000010000000000000002.done'), '');
    writeFileSync(join(status, '000000010000000000000003.ready'), '');
    const reply = (await (await fetch(`${server.url.replace(/\/$/, '')}/backup`, { signal: AbortSignal.timeout(20_000) })).json()) as {
      archivePending?: { segments: number };
    };
    assert.equal(reply.archivePending?.segments, 1);
  });

  it('a listing that does not finish: the answer comes anyway, saying why, with the last listing read', async () => {
    const base = server.url.replace(/\/$/, '');
    const get = async () => (await (await fetch(`${base}/backup`, { signal: AbortSignal.timeout(20_000) })).json()) as Record<string, unknown>;
    const last = (await get()).info;
    writeFileSync(hold, '');
    clock += 10_000; // the cached listing is old: the next request starts a new one, which hangs
    try {
      const reply = await get();
      assert.match(String(reply.infoError), /^pgbackrest info is still running after 2 s \(the repository is slow or unreachable\)/);
      assert.deepEqual(reply.info, last, 'the last listing read, if any');
      assert.equal(reply.stanzaReady, false, "the keeper's own status is there");
    } finally {
      rmSync(hold, { force: true });
    }
    const fresh = await get();
    assert.doesNotMatch(String(fresh.infoError), /still running/, 'the held listing finished and answers');
    assert.equal(
      readFileSync(starts, 'utf8')
        .split('\n')
        .filter((line) => line.includes('info')).length,
      2,
      'the held listing was shared, not started again',
    );
  });
});
