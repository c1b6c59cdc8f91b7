import { connInfo } from './conf.js';
import { peerConnectionTls } from './peer-tls.js';
import type { LeaderAddress, PostgresInstance } from './instance.js';
import { runTool } from './runner.js';

/** Brings a crashed data directory to a clean shutdown state (pg_rewind refuses otherwise). */
async function crashRecoverSingleUser(db: PostgresInstance): Promise<void> {
  const result = await runTool(db.tool('postgres'), ['--single', '-D', db.settings.dataDir, '-c', 'archive_mode=off', 'postgres'], {
    runAs: db.runAs,
    activity: db.activity,
    stdin: '',
    timeoutMs: 300_000,
  });
  if (result.code !== 0) throw new Error(`single-user crash recovery failed: ${result.output.slice(-300)}`);
}

/** pg_rewind against the leader; the server must be stopped. Returns false when it failed. */
export async function rewindFrom(db: PostgresInstance, leader: LeaderAddress): Promise<boolean> {
  const { settings } = db;
  const control = await db.controlData();
  if (control && control.state === 'in production') {
    db.log.info('running single-user crash recovery before pg_rewind');
    db.writeConfig(undefined, false);
    await crashRecoverSingleUser(db);
  }
  const source = connInfo(
    {
      host: leader.host,
      port: leader.port,
      user: settings.superuser.username,
      password: settings.superuser.password,
      applicationName: `${settings.name}-rewind`,
      tls: peerConnectionTls(settings.peerTls, leader),
    },
    'postgres',
  );
  const result = await runTool(db.tool('pg_rewind'), ['-D', settings.dataDir, `--source-server=${source}`, '--no-sync'], {
    runAs: db.runAs,
    activity: db.activity,
    timeoutMs: 600_000,
  });
  if (result.code !== 0) {
    db.log.error({ output: result.output.slice(-400) }, 'pg_rewind failed');
    return false;
  }
  db.log.info({ output: result.output.slice(-200) }, 'pg_rewind finished');
  return true;
}
