import { rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { PostgresInstance } from './instance.js';
import { runToolOrThrow, writePrivateFile } from './runner.js';

/** initdb with the superuser's password (from a private file, removed after), then the configuration files as a primary. */
export async function initdb(db: PostgresInstance): Promise<void> {
  const { settings } = db;
  db.prepareDirectories();
  const pwFile = join(dirname(settings.dataDir), '.pwfile');
  await db.whileInitializing(async () => {
    writePrivateFile(pwFile, `${settings.superuser.password}\n`, db.runAs);
    try {
      await runToolOrThrow(
        db.tool('initdb'),
        [
          '-D',
          settings.dataDir,
          '-U',
          settings.superuser.username,
          `--pwfile=${pwFile}`,
          '-A',
          'scram-sha-256',
          '--auth-local=trust',
          '-E',
          'UTF8',
          '--locale=C',
          '-k',
          '--no-sync',
        ],
        { runAs: db.runAs, activity: db.activity, timeoutMs: 120_000 },
      );
    } finally {
      rmSync(pwFile, { force: true });
    }
  });
  db.writeConfig(undefined);
}

/**
 * Creates the replication role once the new primary accepts connections (the application's:
 * app-owner.ts), and sets the superuser's password: a cluster restored from a backup carries
 * the source cluster's.
 */
export async function createRoles(db: PostgresInstance): Promise<void> {
  const { username, password } = db.settings.replication;
  const client = await db.connect();
  try {
    const superuser = db.settings.superuser;
    await client.query(`ALTER ROLE ${client.escapeIdentifier(superuser.username)} WITH PASSWORD ${client.escapeLiteral(superuser.password)}`);
    const exists = await client.query('SELECT 1 FROM pg_roles WHERE rolname = $1', [username]);
    const quotedName = client.escapeIdentifier(username);
    const quotedPassword = client.escapeLiteral(password);
    if (exists.rowCount === 0) await client.query(`CREATE ROLE ${quotedName} WITH LOGIN REPLICATION PASSWORD ${quotedPassword}`);
    else await client.query(`ALTER ROLE ${quotedName} WITH LOGIN REPLICATION PASSWORD ${quotedPassword}`);
  } finally {
    await client.end().catch(() => undefined);
  }
}
