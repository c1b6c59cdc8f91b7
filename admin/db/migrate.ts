import { createHash } from 'node:crypto';
import type { Db } from './pool.js';
import type { Logger } from '../../lib/log.js';

/** One schema step. Kept as TypeScript modules so tsx and the compiled dist/ find them alike. */
export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export const MIGRATIONS_TABLE = 'keelson_admin_migrations';
// Any constant works; it only has to be the same for every replica so two cannot migrate at once.
const LOCK_KEY = 7_246_001;

export const checksum = (sql: string): string => createHash('sha256').update(sql).digest('hex');

/** Versions must be unique and ascending; a gap or a duplicate is a programming error. */
export function checkMigrationList(migrations: readonly Migration[]): void {
  migrations.forEach((m, index) => {
    if (m.version !== index + 1) throw new Error(`migration ${m.name}: version ${m.version} out of order (expected ${index + 1})`);
  });
}

export interface MigrationResult {
  applied: number[];
  current: number;
}

/**
 * Applies the pending migrations in order, each in its own transaction, under an advisory lock.
 * An applied migration whose text changed is refused: history is never rewritten silently.
 */
export async function migrate(db: Db, migrations: readonly Migration[], logger?: Logger): Promise<MigrationResult> {
  checkMigrationList(migrations);
  const client = await db.connect();
  try {
    await client.query('SELECT pg_advisory_lock($1)', [LOCK_KEY]);
    await client.query(`CREATE TABLE IF NOT EXISTS ${MIGRATIONS_TABLE} (
      version integer PRIMARY KEY, name text NOT NULL, checksum text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`);
    const { rows } = await client.query<{ version: number; name: string; checksum: string }>(
      `SELECT version, name, checksum FROM ${MIGRATIONS_TABLE} ORDER BY version`,
    );
    const known = new Map(rows.map((r) => [r.version, r]));
    const newest = migrations.length;
    for (const row of rows) {
      if (row.version > newest)
        throw new Error(`database has migration ${row.version} (${row.name}) that this build does not know; refusing to run an older build`);
    }
    const applied: number[] = [];
    for (const migration of migrations) {
      const existing = known.get(migration.version);
      if (existing) {
        if (existing.checksum !== checksum(migration.sql)) {
          throw new Error(`migration ${migration.version} (${migration.name}) changed after it was applied`);
        }
        continue;
      }
      await client.query('BEGIN');
      try {
        await client.query(migration.sql);
        await client.query(`INSERT INTO ${MIGRATIONS_TABLE} (version, name, checksum) VALUES ($1, $2, $3)`, [
          migration.version,
          migration.name,
          checksum(migration.sql),
        ]);
        await client.query('COMMIT');
      } catch (error) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw new Error(`migration ${migration.version} (${migration.name}) failed: ${(error as Error).message}`, { cause: error });
      }
      applied.push(migration.version);
      logger?.info({ version: migration.version, name: migration.name }, 'migration applied');
    }
    return { applied, current: newest };
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [LOCK_KEY]).catch(() => undefined);
    client.release();
  }
}
