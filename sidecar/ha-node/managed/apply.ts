import type pg from 'pg';
import type { ManagedDatabaseResult } from '../../../api/crd/managed-status.js';
import { readDatabases, readInside } from './catalog.js';
import { planDatabase, planInside, type DatabaseIntent } from './database-plan.js';

/**
 * Running what the plans decided: statements in order, the first failure the answer (rolled back
 * when they ran in a transaction), and the Database objects' passes (the database itself from the
 * maintenance database, then its schemas and extensions from inside it).
 */

export type Connect = (database?: string) => Promise<pg.Client>;

export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * A statement waiting on a lock (a session holding the role or database it touches) gives up
 * after this long, and the pass reports it, instead of waiting for ever.
 */
export const lockTimeout = '10s';

/** Opens a connection for a pass, with the lock bound set. */
export async function openSession(connect: Connect, database?: string): Promise<pg.Client> {
  const client = await connect(database);
  try {
    await client.query(`SET lock_timeout = '${lockTimeout}'`);
  } catch (error) {
    await client.end().catch(() => undefined);
    throw error;
  }
  return client;
}

/** Runs statements in order; the first failure stops them and is the answer. */
export async function run(client: pg.Client, statements: readonly string[], transaction: boolean): Promise<string | undefined> {
  if (statements.length === 0) return undefined;
  try {
    if (transaction) await client.query('BEGIN');
    for (const statement of statements) await client.query(statement);
    if (transaction) await client.query('COMMIT');
    return undefined;
  } catch (error) {
    if (transaction) await client.query('ROLLBACK').catch(() => undefined);
    return messageOf(error);
  }
}

/** One pass over the Database objects: a refused or retained one runs nothing; a deleted one is `released` once done. */
export async function applyDatabases(
  client: pg.Client,
  connect: Connect,
  intents: DatabaseIntent[],
): Promise<{ results: ManagedDatabaseResult[]; statements: number }> {
  const actual = await readDatabases(
    client,
    intents.map((i) => i.object.spec.name),
  );
  let statements = 0;
  const results: ManagedDatabaseResult[] = [];
  for (const intent of intents) {
    const { object } = intent;
    const base = { uid: object.metadata.uid, object: object.metadata.name, name: object.spec.name, generation: object.metadata.generation };
    if (intent.conflict) {
      results.push({ ...base, applied: false, message: intent.conflict });
      continue;
    }
    const deleted = object.metadata.deletionTimestamp !== undefined;
    if (intent.ensure === 'untouched') {
      results.push({ ...base, applied: true, ...(deleted ? { released: true } : {}) });
      continue;
    }
    const outer = planDatabase(object.spec, intent.ensure, actual.get(object.spec.name));
    let failure = await run(client, outer, false);
    if (!failure) statements += outer.length;
    let problems: string[] = [];
    if (!failure && intent.ensure === 'present') {
      const inside = await applyInside(connect, intent).catch((error: unknown) => ({ statements: 0, failure: messageOf(error), problems: [] }));
      statements += inside.statements;
      failure = inside.failure;
      problems = inside.problems;
    }
    const message = failure ?? (problems.length > 0 ? problems.join('; ') : undefined);
    results.push({ ...base, applied: !message, ...(message ? { message } : {}), ...(deleted && !failure ? { released: true } : {}) });
  }
  return { results, statements };
}

async function applyInside(connect: Connect, intent: DatabaseIntent): Promise<{ statements: number; failure?: string; problems: string[] }> {
  const client = await openSession(connect, intent.object.spec.name);
  try {
    const plan = planInside(intent.object.spec, await readInside(client));
    const failure = await run(client, plan.statements, true);
    return { statements: failure ? 0 : plan.statements.length, failure, problems: plan.problems };
  } finally {
    await client.end().catch(() => undefined);
  }
}
