import { readFileSync } from 'node:fs';
import pg from 'pg';
import { OperationError } from './client.js';
import { memberEndpoint } from './member-route.js';
import { CtlExit, load, UsageError, type CtlContext } from './context.js';
import { leaderOf, memberNamed, type ClusterDocument, type ClusterMember } from './discovery.js';
import { queryTls, type QueryTlsOptions } from './query-tls.js';
import { machine, table } from './render.js';

/** `dsn` and `query`: reach a member's PostgreSQL at the host and port its ha-node publishes. */

export interface MemberChoice {
  member?: string;
  /** leader (also: primary), replica or any; default leader. */
  role?: string;
}

/** The member a command talks to: the one named, else the first of the role (the leader by default). */
export function chooseMember(cluster: ClusterDocument, choice: MemberChoice): ClusterMember {
  if (choice.member) return memberNamed(cluster, choice.member);
  const role = choice.role ?? 'leader';
  if (!['leader', 'primary', 'replica', 'any'].includes(role)) throw new UsageError(`--role must be leader, primary, replica or any, not "${role}"`);
  const sorted = [...cluster.members].sort((a, b) => a.name.localeCompare(b.name));
  const found =
    role === 'leader' || role === 'primary'
      ? leaderOf(cluster)
      : role === 'replica'
        ? sorted.find((m) => m !== leaderOf(cluster))
        : role === 'any'
          ? sorted[0]
          : undefined;
  if (!found) throw new OperationError(0, `no ${role === 'primary' ? 'leader' : role} member in the cluster`);
  return found;
}

function addressOf(member: ClusterMember): { host: string; port: number } {
  if (!member.host) throw new OperationError(0, `member ${member.name} publishes no PostgreSQL address`);
  return { host: member.host, port: member.port ?? 5432 };
}

/** libpq keyword/value connection string; values quoted only when they must be. */
export function dsnOf(fields: Record<string, string | number | undefined>): string {
  const quote = (value: string): string => (/^[^\s'\\]+$/.test(value) ? value : `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`);
  return Object.entries(fields)
    .filter(([, value]) => value !== undefined && value !== '')
    .map(([key, value]) => `${key}=${quote(String(value))}`)
    .join(' ');
}

export async function dsnCommand(ctx: CtlContext, choice: MemberChoice): Promise<number> {
  const { cluster } = await load(ctx);
  const member = chooseMember(cluster, choice);
  const { host, port } = addressOf(member);
  ctx.out(ctx.format === 'table' ? `${dsnOf({ host, port })}\n` : machine({ member: member.name, host, port }, ctx.format));
  return CtlExit.ok;
}

export interface QueryOptions extends MemberChoice, QueryTlsOptions {
  command?: string;
  file?: string;
  dbname?: string;
  dbUser?: string;
}

function sqlOf(options: QueryOptions): string {
  if (options.command !== undefined && options.file !== undefined) throw new UsageError('give --command or --file, not both');
  if (options.file !== undefined) {
    try {
      return readFileSync(options.file === '-' ? 0 : options.file, 'utf8');
    } catch (error) {
      throw new UsageError(`cannot read --file ${options.file}: ${(error as Error).message}`);
    }
  }
  if (options.command === undefined || options.command.trim() === '') throw new UsageError('give the SQL with --command or --file');
  return options.command;
}

function cellText(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (value instanceof Date) return value.toISOString();
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

/**
 * `query`: runs SQL on a member (the leader unless --member/--role say otherwise), as the user
 * PGUSER or --db-user with PGPASSWORD or ~/.pgpass, like psql, over TLS as query-tls.ts decides
 * (verify-full against the cluster's CA by default). Every statement's rows are shown.
 */
export async function queryCommand(ctx: CtlContext, options: QueryOptions): Promise<number> {
  const sql = sqlOf(options);
  const { cluster, scope } = await load(ctx);
  const member = chooseMember(cluster, options);
  const { host, port } = addressOf(member);
  const ssl = await queryTls(options, process.env, ctx.target, { name: member.name, scope });
  // Through the member proxy when the route has one (a local stack's pod addresses exist only inside it).
  const endpoint = await memberEndpoint(ctx.client.route, host, port, ctx.client.timeoutMs);
  const client = new pg.Client({
    host: endpoint.host,
    port: endpoint.port,
    database: options.dbname ?? process.env.PGDATABASE ?? 'postgres',
    user: options.dbUser ?? process.env.PGUSER ?? 'postgres',
    application_name: 'keelson ctl query',
    ...(ssl !== undefined ? { ssl } : {}),
    connectionTimeoutMillis: ctx.client.timeoutMs,
  });
  client.on('error', () => undefined);
  try {
    await client.connect();
  } catch (error) {
    endpoint.close();
    throw new OperationError(0, `cannot connect to ${member.name} (${host}:${port}): ${(error as Error).message}`);
  }
  try {
    const raw = (await client.query(sql)) as pg.QueryResult | pg.QueryResult[];
    const results = (Array.isArray(raw) ? raw : [raw]).filter((r) => r.fields.length > 0 || r.command);
    if (ctx.format !== 'table') {
      const rows = results.map((r) => r.rows as Array<Record<string, unknown>>);
      ctx.out(machine(rows.length === 1 ? rows[0] : rows, ctx.format));
    } else {
      for (const result of results) {
        if (result.fields.length === 0) ctx.out(`${result.command}${result.rowCount === null ? '' : ` ${result.rowCount}`}\n`);
        else
          ctx.out(
            table(
              result.fields.map((f) => f.name),
              result.rows.map((row: Record<string, unknown>) => result.fields.map((f) => cellText(row[f.name]))),
            ),
          );
      }
    }
    return CtlExit.ok;
  } catch (error) {
    throw new OperationError(0, `${member.name}: ${(error as Error).message}`);
  } finally {
    await client.end().catch(() => undefined);
    endpoint.close();
  }
}
