import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createLogger } from '../../../../lib/log.js';
import { cloneFrom } from '../../../../sidecar/ha-node/postgres/clone.js';
import { PostgresInstance } from '../../../../sidecar/ha-node/postgres/instance.js';
import { freePort } from '../../../support/ports.js';

const quiet = createLogger({ name: 'instance-state-test', level: process.env.LOG_LEVEL ?? 'silent' });

/**
 * PostgresInstance's state changes only through its own transitions. The clone paths (pg_basebackup,
 * a pgBackRest restore for a replica or for a new cluster) share one bracket: 'creating_replica'
 * while the new data directory is built, 'stopped' once it is in place, and the state before it
 * when building fails (the restore for a new cluster used to stay 'creating_replica').
 */
describe('PostgresInstance state transitions', () => {
  let dir: string;
  let pg: PostgresInstance;

  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'keelson-instance-state-'));
    const dataDir = join(dir, 'pgdata');
    pg = new PostgresInstance(
      {
        name: 'm-0',
        scope: 's',
        dataDir,
        binDir: '/usr/lib/postgresql/15/bin',
        listenAddress: '127.0.0.1',
        connectHost: '127.0.0.1',
        port: 5432,
        socketDir: dir,
        superuser: { username: 'postgres', password: 'x' },
        replication: { username: 'replicator', password: 'x' },
        parameters: {},
      },
      quiet,
    );
  });

  after(() => rmSync(dir, { recursive: true, force: true }));

  it('shows creating_replica while a data directory is built and stopped once it is in place', async () => {
    let during: string | undefined;
    const result = await pg.whileCreating(async () => {
      during = pg.state;
      return 'label';
    });
    assert.equal(result, 'label');
    assert.equal(during, 'creating_replica');
    assert.equal(pg.state, 'stopped');
  });

  it('goes back to the state before it when building fails', async () => {
    pg.markCrashed();
    await assert.rejects(
      pg.whileCreating(() => Promise.reject(new Error('restore failed'))),
      /restore failed/,
    );
    assert.equal(pg.state, 'crashed');
  });

  it('ends stopped after a failed build that followed a reinitialize (the data directory is gone)', async () => {
    pg.markCreatingReplica();
    await assert.rejects(pg.whileCreating(() => Promise.reject(new Error('no leader'))));
    assert.equal(pg.state, 'stopped');
  });

  it('a pg_basebackup that cannot reach the leader keeps the old data directory and the state before it', async () => {
    mkdirSync(pg.settings.dataDir, { recursive: true });
    writeFileSync(join(pg.settings.dataDir, 'PG_VERSION'), '15\n');
    pg.markFailed('start_failed');
    const port = await freePort();
    await assert.rejects(cloneFrom(pg, { name: 'leader-0', host: '127.0.0.1', port }));
    assert.equal(pg.state, 'start_failed');
    assert.ok(existsSync(join(pg.settings.dataDir, 'PG_VERSION')), 'the old data directory is kept');
    assert.ok(!existsSync(`${pg.settings.dataDir}.clone`), 'the side folder is removed');
  });

  it('configure() changes only the parts it is given', () => {
    pg.configure({ dynamic: { work_mem: '8MB' }, hba: ['host all all 127.0.0.1/32 scram-sha-256'] });
    pg.configure({ enforced: { archive_mode: 'on' } });
    assert.deepEqual(pg.dynamicParameters, { work_mem: '8MB' });
    assert.deepEqual(pg.enforcedParameters, { archive_mode: 'on' });
    assert.deepEqual(pg.hbaLines, ['host all all 127.0.0.1/32 scram-sha-256']);
  });
});
