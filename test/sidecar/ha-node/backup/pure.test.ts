import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { lastRecords, previousSegment } from '../../../../sidecar/ha-node/backup/window.js';
import { parseBackupRequest } from '../../../../sidecar/ha-node/api/ops/backup-routes.js';
import { archiveParameters, backupPaths, renderPgBackRestConf } from '../../../../sidecar/ha-node/backup/conf.js';
import { errorSummary, PgBackRest } from '../../../../sidecar/ha-node/backup/engine.js';
import { parseInfo } from '../../../../sidecar/ha-node/backup/info.js';
import { backupForTarget, postgresTime, recoveryFailure, replayPrefetch, restoreProblem } from '../../../../sidecar/ha-node/backup/restore.js';
import { parseBackupConfig } from '../../../../api/ha-node/backup-settings.js';

const s3 = {
  kind: 's3',
  bucket: 'backups',
  endpoint: 'minio.example',
  region: 'eu-1',
  path: '/prod',
  uriStyle: 'path',
  keyFile: '/secrets/key',
  secretKeyFile: '/secrets/secret',
};
const server = { dataDir: '/var/lib/pg/data/pgdata', port: 5432, socketDir: '/var/lib/pg/data/run', user: 'postgres' };

describe('backup settings (KEELSON_BACKUP)', () => {
  it('applies defaults: lz4, two processes, TLS verified, host-style', () => {
    const config = parseBackupConfig(JSON.stringify({ stanza: 'db', repositories: [{ ...s3, uriStyle: undefined }] }));
    assert.equal(config.compressType, 'lz4');
    assert.equal(config.processMax, 2);
    const repository = config.repositories[0]!;
    assert.equal(repository.kind === 's3' && repository.verifyTls, true);
    assert.equal(repository.kind === 's3' && repository.uriStyle, 'host');
  });

  it('names the field of a bad value', () => {
    assert.throws(() => parseBackupConfig('{'), /not valid JSON/);
    assert.throws(() => parseBackupConfig(JSON.stringify({ stanza: 'db', repositories: [{ ...s3, bucket: 'No_Such' }] })), /repositories\.0\.bucket/);
    assert.throws(() => parseBackupConfig(JSON.stringify({ stanza: 'a b', repositories: [s3] })), /stanza/);
    assert.throws(
      () => parseBackupConfig(JSON.stringify({ stanza: 'db', repositories: [s3], retention: { fullCount: 2, windowDays: 7 } })),
      /fullCount or windowDays/,
    );
    assert.throws(
      () =>
        parseBackupConfig(
          JSON.stringify({ stanza: 'db', repositories: [s3], recovery: { stanza: 'src', repository: s3, target: { time: '2026-01-01 10:00' } } }),
        ),
      /recovery\.target\.time/,
    );
  });

  it("refuses a recovery source that is the cluster's own stanza and repository", () => {
    assert.throws(
      () => parseBackupConfig(JSON.stringify({ stanza: 'db', repositories: [s3], recovery: { stanza: 'db', repository: s3 } })),
      /archive elsewhere/,
    );
    assert.doesNotThrow(() => parseBackupConfig(JSON.stringify({ stanza: 'db2', repositories: [s3], recovery: { stanza: 'db', repository: s3 } })));
  });
});

describe('pgbackrest.conf rendering', () => {
  const paths = backupPaths(server.dataDir);

  it('keeps the spool on the data volume and every repository numbered, with S3 options', () => {
    const config = parseBackupConfig(
      JSON.stringify({
        stanza: 'db',
        repositories: [
          { kind: 'posix', path: '/repo' },
          { ...s3, port: 9000, caFile: '/ca/ca.crt', verifyTls: false },
        ],
        retention: { fullCount: 3 },
        processMax: 4,
      }),
    );
    const text = renderPgBackRestConf({
      stanza: 'db',
      repositories: config.repositories,
      credentials: [undefined, { key: 'AK', secretKey: 'SK' }],
      config,
      server,
      paths,
    });
    assert.equal(paths.spool, '/var/lib/pg/data/pgbackrest/spool');
    for (const expected of [
      'spool-path=/var/lib/pg/data/pgbackrest/spool',
      'archive-async=y',
      'compress-type=lz4',
      'process-max=4',
      'repo1-type=posix',
      'repo1-path=/repo',
      'repo1-bundle=y',
      'repo2-bundle=y',
      'repo1-retention-full-type=count',
      'repo1-retention-full=3',
      'repo2-type=s3',
      'repo2-s3-bucket=backups',
      'repo2-s3-uri-style=path',
      'repo2-storage-port=9000',
      'repo2-storage-ca-file=/ca/ca.crt',
      'repo2-storage-verify-tls=n',
      'repo2-s3-key=AK',
      'repo2-s3-key-secret=SK',
      '[db]',
      'pg1-path=/var/lib/pg/data/pgdata',
      'pg1-socket-path=/var/lib/pg/data/run',
    ]) {
      assert.ok(text.split('\n').includes(expected), `${expected} in\n${text}`);
    }
    assert.doesNotMatch(text, /archive-push-queue-max/, 'WAL is never dropped to make room');
  });

  it('refuses a credential with a line break (it would inject options)', () => {
    const config = parseBackupConfig(JSON.stringify({ stanza: 'db', repositories: [s3] }));
    assert.throws(
      () =>
        renderPgBackRestConf({
          stanza: 'db',
          repositories: config.repositories,
          credentials: [{ key: 'AK\nrepo1-path=/x', secretKey: 'SK' }],
          config,
          server,
          paths,
        }),
      /line break/,
    );
  });

  it("archive settings: archive_mode on, push and get through the cluster's own stanza", () => {
    const parameters = archiveParameters('pgbackrest', '/d/pgbackrest/pgbackrest.conf', 'db', 60);
    assert.equal(parameters.archive_mode, 'on');
    assert.equal(parameters.archive_command, 'pgbackrest --config=/d/pgbackrest/pgbackrest.conf --stanza=db archive-push %p');
    assert.equal(parameters.restore_command, 'pgbackrest --config=/d/pgbackrest/pgbackrest.conf --stanza=db archive-get %f %p');
    assert.equal(archiveParameters('pgbackrest', "/it's/conf", 'db', 60).archive_command, "pgbackrest '--config=/it'\\''s/conf' --stanza=db archive-push %p");
  });
});

const infoText = (backups: unknown[], code = 0): string =>
  JSON.stringify([
    {
      name: 'src',
      status: { code, message: 'ok' },
      archive: [{ id: '15-1', min: '000000010000000000000001', max: '000000010000000000000009', database: { id: 1, 'repo-key': 1 } }],
      backup: backups,
      db: [{ id: 1, 'repo-key': 1, 'system-id': 7300000000000000, version: '15' }],
      repo: [{ key: 1, status: { code: 0, message: 'ok' } }],
    },
  ]);
const fullSet = {
  label: '20260101-100000F',
  type: 'full',
  prior: null,
  archive: { start: '000000010000000000000003', stop: '000000010000000000000003' },
  database: { id: 1, 'repo-key': 1 },
  info: { size: 100, repository: { size: 10, delta: 10 } },
  lsn: { start: '0/3000028', stop: '0/3000100' },
  timestamp: { start: 1767261600, stop: 1767261660 },
};
const incrSet = {
  ...fullSet,
  label: '20260101-100000F_20260101-110000I',
  type: 'incr',
  prior: '20260101-100000F',
  timestamp: { start: 1767265200, stop: 1767265260 },
};

describe('pgbackrest info and restore checks', () => {
  it('parses backups with their WAL range, timeline and system identifier', () => {
    const info = parseInfo(infoText([fullSet, incrSet]), 'src');
    assert.equal(info.backups.length, 2);
    assert.equal(info.backups[0]!.stoppedAt, '2026-01-01T10:01:00.000Z');
    assert.equal(info.backups[0]!.timeline, 1);
    assert.equal(info.backups[1]!.prior, '20260101-100000F');
    assert.equal(parseInfo(infoText([]), 'other').code, 1, 'a stanza not listed is missing');
    assert.throws(() => parseInfo('[{"name": 3}]', 'src'), /unexpected pgbackrest info output/);
  });

  it('picks the newest backup ended before the target, and refuses what cannot work', () => {
    const source = parseInfo(infoText([fullSet, incrSet]), 'src');
    const empty = parseInfo(infoText([]), 'own');
    const recovery = (target: Record<string, string>) => ({ stanza: 'src', repository: { kind: 'posix' as const, path: '/r' }, target });
    assert.equal(backupForTarget(source, recovery({ time: '2026-01-01T10:30:00Z' })), fullSet.label);
    assert.equal(backupForTarget(source, recovery({})), incrSet.label);
    assert.equal(restoreProblem(source, empty, recovery({ time: '2026-01-01T10:30:00Z' })), undefined);
    assert.match(restoreProblem(source, empty, recovery({ time: '2026-01-01T09:00:00Z' }))!, /recovery\.target\.time.*2026-01-01T10:01:00/);
    assert.match(restoreProblem(source, empty, recovery({ backup: '20991231-000000F' }))!, /recovery\.target\.backup/);
    assert.match(restoreProblem(parseInfo(infoText([]), 'src'), empty, recovery({}))!, /has no backup/);
    const gap = parseInfo(infoText([fullSet]).replace('"min":"000000010000000000000001"', '"min":"000000010000000000000005"'), 'src');
    assert.match(
      restoreProblem(gap, empty, recovery({}))!,
      /first WAL segment of backup 20260101-100000F \(000000010000000000000003\) is not in the source archive/,
    );
    const used = parseInfo(infoText([fullSet]).replace('"src"', '"own"'), 'own');
    assert.match(restoreProblem(source, used, recovery({}))!, /own archive \(stanza own\) is not empty/);
  });

  it('writes the target time the way the server accepts it at startup', () => {
    assert.equal(postgresTime('2026-01-01T10:30:00.123456Z'), '2026-01-01 10:30:00.123456+00');
    assert.equal(postgresTime('2026-01-01T10:30:00+02:00'), '2026-01-01 10:30:00+02:00');
  });

  it('reads why replay stopped from the server log', () => {
    const tail =
      '2026-01-01 10:00:01 GMT [1] LOG:  last completed transaction was at log time 2026-01-01 09:59:58.123+00\n2026-01-01 10:00:01 GMT [1] FATAL:  recovery ended before configured recovery target was reached';
    assert.equal(recoveryFailure(tail), 'recovery.target.time: beyond the end of the archive; the last restorable time is 2026-01-01 09:59:58.123+00');
    assert.equal(recoveryFailure('FATAL:  x\nFATAL:  y'), 'recovery stopped before promotion: FATAL:  x | FATAL:  y');
  });

  it('summarises pgBackRest errors without the request dump', () => {
    const output =
      'INFO: begin\nERROR: [039]: HTTP request failed with 403 (Forbidden):\n       *** Path/Query ***:\n       HEAD /b/archive.info\n       HINT: check the key\n';
    assert.equal(errorSummary(output), 'ERROR: [039]: HTTP request failed with 403 (Forbidden): HINT: check the key');
  });
});

describe('POST /backup body', () => {
  it('accepts type and repository, refuses anything else naming the field', () => {
    assert.deepEqual(parseBackupRequest(undefined), { ok: true, type: 'full', repository: 1 });
    assert.deepEqual(parseBackupRequest({ type: 'diff', repository: 2 }), { ok: true, type: 'diff', repository: 2 });
    assert.match((parseBackupRequest({ type: 'nightly' }) as { text: string }).text, /"type"/);
    assert.match((parseBackupRequest({ repository: 1.5 }) as { text: string }).text, /"repository"/);
    assert.match((parseBackupRequest({ label: 'x' }) as { text: string }).text, /unknown field "label"/);
    assert.match((parseBackupRequest([1]) as { text: string }).text, /JSON object/);
  });
});

describe('restorable window pieces', () => {
  it('steps back one WAL segment, across a log file, not before the first', () => {
    assert.equal(previousSegment('000000020000000100000003'), '000000020000000100000002');
    assert.equal(previousSegment('0000000200000001000000A0'), '00000002000000010000009F');
    assert.equal(previousSegment('000000020000000100000000'), '0000000200000000000000FF');
    assert.equal(previousSegment('000000010000000000000000'), undefined);
  });

  it('takes the last record and the last commit from pg_waldump, LSN written as PostgreSQL writes it', () => {
    const dump = [
      'rmgr: Heap        len (rec/tot):     59/    59, tx:        741, lsn: 0/04000110, prev 0/040000D8, desc: INSERT off 2 flags 0x00',
      'rmgr: Transaction len (rec/tot):     34/    34, tx:        741, lsn: 0/04000150, prev 0/04000110, desc: COMMIT 2026-11-28 05:14:00.328431 UTC',
      'rmgr: Standby     len (rec/tot):     50/    50, tx:          0, lsn: 0/04000178, prev 0/04000150, desc: RUNNING_XACTS nextXid 742',
      'pg_waldump: error: error in WAL record at 0/4000178: invalid record length at 0/40001B0: wanted 24, got 0',
    ].join('\n');
    assert.deepEqual(lastRecords(dump), { lsn: '0/4000178', commitTime: '2026-11-28T05:14:00.328Z' });
    assert.deepEqual(lastRecords('pg_waldump: error: could not find a valid record'), {});
  });
});

describe('restore_command of a replay', () => {
  it('fetches WAL ahead over a long replay, on demand for an immediate target', () => {
    assert.equal(replayPrefetch({ target: { immediate: true } }), false);
    assert.equal(replayPrefetch({ target: { time: '2026-11-28T05:14:00Z' } }), true);
    assert.equal(replayPrefetch({ target: {} }), true);
    const config = parseBackupConfig(
      JSON.stringify({
        stanza: 'db',
        repositories: [{ kind: 'posix', path: '/repo' }],
        recovery: { stanza: 'src', repository: { kind: 'posix', path: '/repo' }, target: { immediate: true } },
      }),
    );
    const engine = new PgBackRest({
      config,
      server: { dataDir: '/var/lib/pg/data/pgdata', port: 5432, socketDir: '/run', user: 'postgres' },
      bin: '/usr/bin/pgbackrest',
    });
    assert.equal(
      engine.restoreCommand({ source: true, prefetch: false }),
      '/usr/bin/pgbackrest --config=/var/lib/pg/data/pgbackrest/source.conf --stanza=src --no-archive-async archive-get %f %p',
    );
    assert.equal(
      engine.restoreCommand({ prefetch: true, pgPath: '/elsewhere' }),
      '/usr/bin/pgbackrest --config=/var/lib/pg/data/pgbackrest/pgbackrest.conf --stanza=db --pg1-path=/elsewhere archive-get %f %p',
    );
  });
});
