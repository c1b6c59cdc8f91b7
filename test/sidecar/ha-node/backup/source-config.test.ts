/**
 * source.conf of a standby cluster from a repository: written while the dynamic configuration
 * names a source, removed once the cluster is promoted, untouched while the configuration is
 * unknown; the real engine writes the real file (with the source's S3 credentials).
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { PgBackRest } from '../../../../sidecar/ha-node/backup/engine.js';
import { BackupKeeper } from '../../../../sidecar/ha-node/backup/keeper.js';
import { parseBackupConfig } from '../../../../api/ha-node/backup-settings.js';
import { capturedLogger } from '../../../support/log-lines.js';

describe('the source repository configuration of a standby cluster', () => {
  const dir = mkdtempSync(join(tmpdir(), 'keelson-source-conf-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const keyFile = join(dir, 'source-key');
  const secretFile = join(dir, 'source-secret');
  writeFileSync(keyFile, 'SOURCEKEY');
  writeFileSync(secretFile, 'SOURCESECRET');
  const source = { kind: 's3', bucket: 'src', endpoint: 'minio.local', region: 'us-east-1', path: '/src', keyFile, secretKeyFile: secretFile };
  const config = parseBackupConfig(
    JSON.stringify({
      stanza: 'db',
      repositories: [{ kind: 'posix', path: join(dir, 'repo') }],
      recovery: { stanza: 'src', repository: source, standby: true },
    }),
  );
  const engine = new PgBackRest({
    config,
    server: { dataDir: join(dir, 'data', 'pgdata'), port: 5432, socketDir: dir, user: 'postgres' },
    bin: '/usr/bin/pgbackrest',
  });
  engine.writeConfig();
  const { logger, lines } = capturedLogger('backup');
  const keeper = new BackupKeeper(engine, logger);
  const conf = engine.paths.sourceConf;

  it('is written while the cluster follows its source, with the source credentials', () => {
    keeper.sourceConfig.follow('standby');
    assert.match(readFileSync(conf, 'utf8'), /SOURCESECRET/);
  });

  it('stays while the dynamic configuration is unknown', () => {
    keeper.sourceConfig.follow('unknown');
    assert.ok(existsSync(conf));
  });

  it('is removed once the cluster is promoted, and stays removed', () => {
    keeper.sourceConfig.follow('promoted');
    assert.equal(existsSync(conf), false);
    keeper.sourceConfig.follow('promoted');
    keeper.sourceConfig.follow('unknown');
    assert.equal(existsSync(conf), false);
    assert.equal(lines.filter((l) => /removed the source repository configuration/.test(String(l.msg))).length, 1);
    assert.ok(!JSON.stringify(lines).includes('SOURCESECRET'), 'no credentials in the log');
  });

  it('is written again when the cluster is made a standby again, and a failure is retried', () => {
    rmSync(secretFile);
    keeper.sourceConfig.follow('standby');
    assert.equal(existsSync(conf), false);
    assert.equal(lines.filter((l) => /cannot keep the source repository configuration/.test(String(l.msg))).length, 1);
    writeFileSync(secretFile, 'ROTATED');
    keeper.sourceConfig.follow('standby');
    assert.match(readFileSync(conf, 'utf8'), /ROTATED/);
  });
});
