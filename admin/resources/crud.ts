import { z } from 'zod';
import type { AdminServices } from '../services.js';
import { prepared, withTransaction, type DbClient } from '../db/pool.js';
import { textTimestamps } from '../db/timestamps.js';
import { Code } from '../http/codes.js';
import { getCurrentUserId } from '../http/context.js';
import { BizError, success, successExtra } from '../http/envelope.js';
import { actorNameFields, auditFields, quoteIdent, readColumns, recordMapper, toColumns, type Fields } from './records.js';
import { param, type ApiRouter } from '../http/router.js';
import { parseBody } from '../http/validate.js';
import { jsonRecords, pageEnvelopeText } from './json-records.js';
import { JsonText } from '../http/respond.js';
import { buildTree, escapeLike, orderClause, searchSchemaFor, type Row } from './crud-helpers.js';

export { buildTree, orderClause, type Row } from './crud-helpers.js';

export type CrudAction = 'search' | 'get' | 'create' | 'update' | 'delete' | 'batchDelete';

/** An SQL condition with its own parameter values, numbered by the caller's `p()`. */
export type AddParam = (value: unknown) => string;

export interface ResourceHooks {
  /** Extra column values derived from the input (for example a password hash). */
  beforeWrite?(input: Record<string, unknown>, action: 'create' | 'update', id: number | undefined): Promise<Record<string, unknown>>;
  /** Runs in the write's transaction: link tables and the like. */
  afterWrite?(client: DbClient, id: number, input: Record<string, unknown>, action: 'create' | 'update'): Promise<void>;
  /** May refuse a delete (BizError) before anything is removed. */
  beforeDelete?(ids: number[]): Promise<void>;
  /** Runs after a committed write or delete (session invalidation, cache busting). */
  afterCommit?(ids: number[], action: 'create' | 'update' | 'delete', input?: Record<string, unknown>): Promise<void>;
  /** Adds derived fields to records (for example role codes of users). */
  decorate?(records: Record<string, unknown>[], rows: Row[]): Promise<void>;
  /** Extra search conditions from resource-specific filters. */
  searchWhere?(body: Record<string, unknown>, p: AddParam): string[];
  /** Row visibility for the current user (for example APIs a non-super user may see). */
  scope?(p: AddParam): string | undefined;
}

export interface ResourceOptions {
  /** Plural path under the router prefix, for example `/users`. */
  path: string;
  table: string;
  /** Singular word for summaries. */
  noun: string;
  fields: Fields;
  createSchema?: z.ZodType<Record<string, unknown>>;
  updateSchema?: z.ZodType<Record<string, unknown>>;
  /** Resource-specific search fields beyond those derived from `fields[*].filter`. */
  searchShape?: Record<string, z.ZodType>;
  actions?: CrudAction[];
  /** Button codes restricting the generated write routes (any-of one code per action). */
  buttons?: Partial<Record<'create' | 'update' | 'delete' | 'batchDelete', string>>;
  /** Delete sets deleted_at instead of removing the row; reads skip deleted rows. */
  softDelete?: boolean;
  /** Adds GET <path>/tree nesting rows by this parent column (0 = root). */
  tree?: { parentColumn: string };
  defaultOrder?: string;
  /**
   * Read-only fields computed by SQL expressions of type json (for example an aggregated link
   * list): part of every read and of the record a write returns, without a query per page.
   */
  computed?: Record<string, string>;
  hooks?: ResourceHooks;
}

const idsBody = z.object({ ids: z.array(z.string()).min(1).max(1000) });

/**
 * Adds the standard routes of one resource to a router: POST /search, GET /{id}, POST, PATCH /{id},
 * DELETE /{id}, DELETE (batch), plus GET /tree when the resource is a tree.
 */
export function addResourceRoutes(router: ApiRouter, services: AdminServices, options: ResourceOptions): void {
  const { db, ids } = services;
  const fields: Fields = { ...options.fields, ...auditFields };
  const table = quoteIdent(options.table);
  const actions = new Set(options.actions ?? ['search', 'get', 'create', 'update', 'delete', 'batchDelete']);
  const hooks = options.hooks ?? {};
  const live = options.softDelete ? 'deleted_at IS NULL' : 'TRUE';
  const fallbackOrder = options.defaultOrder ?? 'id ASC';
  const searchSchema = searchSchemaFor(fields, options.searchShape);
  const buttonsFor = (action: 'create' | 'update' | 'delete' | 'batchDelete') => (options.buttons?.[action] ? { codes: [options.buttons[action]] } : undefined);
  const tags = [options.path.slice(1)];
  // A table with hidden fields (password hashes) is read by explicit columns, so they never leave
  // the database on reads; the tree's parent column is needed for nesting.
  const hidesFields = Object.values(fields).some((field) => field.output === false);
  const readList = [...new Set(['id', ...readColumns(fields), ...(options.tree ? [options.tree.parentColumn] : [])])];
  const rowColumns = hidesFields ? readList.map((column) => `${table}.${quoteIdent(column)}`).join(', ') : `${table}.*`;
  const computedSql = { ...actorNameFields(table), ...options.computed };
  const computed = Object.entries(computedSql);
  const columns = [rowColumns, ...computed.map(([name, expression]) => `(${expression}) AS ${quoteIdent(name)}`)].join(', ');
  // Reads below ask for timestamptz as text (textTimestamps): the mapper takes ms and display text from it.
  const toRecord = recordMapper(fields, ids);
  // Without a decorate hook, PostgreSQL renders search pages as JSON text (ADR 0208).
  const rendered = hooks.decorate ? undefined : jsonRecords(table, fields, ids, computedSql);
  // Search statements by their WHERE and ORDER BY, so a repeated search builds no SQL text.
  const searchStatements = new Map<string, string>();

  const records = async (rows: Row[]): Promise<Record<string, unknown>[]> => {
    const out = rows.map(toRecord);
    for (const [name] of computed) out.forEach((record, i) => (record[name] = rows[i][name]));
    if (hooks.decorate) await hooks.decorate(out, rows);
    return out;
  };

  const visibleWhere = (params: unknown[]): string[] => {
    const p: AddParam = (value) => `$${params.push(value)}`;
    const scope = hooks.scope?.(p);
    return [live, ...(scope ? [scope] : [])];
  };

  /** The total of an empty page (past the last one), which the page query cannot carry. */
  const countWhere = async (whereSql: string, params: unknown[]): Promise<number> =>
    Number((await db.query<{ total: string }>(`SELECT count(*) AS total FROM ${table} WHERE ${whereSql}`, params)).rows[0].total);

  const loadOne = async (id: number): Promise<Row> => {
    const params: unknown[] = [id];
    const { rows } = await db.query({
      ...prepared(`SELECT ${columns} FROM ${table} WHERE id = $1 AND ${visibleWhere(params).join(' AND ')}`, params),
      types: textTimestamps,
    });
    if (!rows[0]) throw new BizError(Code.NOT_FOUND, `${options.noun} not found`);
    return rows[0];
  };

  // Worked out once: the fields a search body may filter by.
  const filterFields = Object.entries(fields).filter(([, field]) => field.filter);

  if (actions.has('search')) {
    router.post(`${options.path}/search`, { summary: `Search ${options.noun} records`, tags }, async (req) => {
      const body = parseBody(searchSchema, req.body) as Record<string, unknown> & { current: number; size: number; orderBy: string[] | null };
      const params: unknown[] = [];
      const p: AddParam = (value) => `$${params.push(value)}`;
      const where = visibleWhere(params);
      for (const [name, field] of filterFields) {
        const value = body[name];
        if (value === undefined || value === null || value === '') continue;
        const column = quoteIdent(field.column);
        if (field.filter === 'anyOf' && Array.isArray(value)) {
          if (value.length) where.push(`${column} && ${p(value)}::text[]`);
        } else if (field.filter === 'contains') where.push(`${column} ILIKE ${p(`%${escapeLike(String(value))}%`)}`);
        else where.push(`${column} = ${p(field.kind === 'id' ? ids.decode(value, name) : value)}`);
      }
      if (hooks.searchWhere) where.push(...hooks.searchWhere(body, p));
      const order = orderClause(body.orderBy, fields, fallbackOrder);
      const whereSql = where.join(' AND ');
      const offset = (body.current - 1) * body.size;
      // One query gives the page and the total; only an empty page needs a separate count. The total
      // is a scalar subquery (counted once, by aggregate) rather than count(*) OVER (), which makes
      // PostgreSQL buffer every matching row before the LIMIT applies (ADR 0206).
      const statementKey = `${whereSql}\u0000${order}`;
      let statement = searchStatements.get(statementKey);
      if (statement === undefined) {
        const limits = `LIMIT $${params.length + 1} OFFSET $${params.length + 2}`;
        const total = `(SELECT count(*) FROM ${table} WHERE ${whereSql}) AS __total`;
        statement = `SELECT ${rendered ? rendered.select : columns}, ${total} FROM ${table} WHERE ${whereSql} ORDER BY ${order} ${limits}`;
        if (searchStatements.size < 1000) searchStatements.set(statementKey, statement);
      }
      const values = [...params, body.size, offset];
      if (rendered) {
        const { rows } = await db.query<unknown[]>({ ...prepared(statement, values), rowMode: 'array' });
        const count = rows.length ? Number(rows[0][rendered.columnCount]) : await countWhere(whereSql, params);
        return new JsonText(
          pageEnvelopeText(
            rows.map((row) => rendered.write(row)),
            count,
            body.current,
            body.size,
          ),
        );
      }
      const page = await db.query({ ...prepared(statement, values), types: textTimestamps });
      const count = page.rows.length ? Number(page.rows[0].__total) : await countWhere(whereSql, params);
      return successExtra({ records: await records(page.rows), total: count, current: body.current, size: body.size });
    });
  }

  if (options.tree) {
    router.get(`${options.path}/tree`, { summary: `${options.noun} tree`, tags }, async () => {
      const params: unknown[] = [];
      const { rows } = await db.query({
        text: `SELECT ${columns} FROM ${table} WHERE ${visibleWhere(params).join(' AND ')} ORDER BY ${fallbackOrder}, id`,
        values: params,
        types: textTimestamps,
      });
      const nodes = await records(rows);
      return success(buildTree(rows, nodes, options.tree?.parentColumn ?? 'parent_id'));
    });
  }

  if (actions.has('get')) {
    router.get(`${options.path}/{id}`, { summary: `Get one ${options.noun}`, tags }, async (req) => {
      const row = await loadOne(ids.decode(param(req, 'id')));
      return success((await records([row]))[0]);
    });
  }

  const write = async (action: 'create' | 'update', input: Record<string, unknown>, id?: number): Promise<Row> => {
    const extra = hooks.beforeWrite ? await hooks.beforeWrite(input, action, id) : {};
    const changes = { ...toColumns(input, fields, ids), ...extra };
    const actor = getCurrentUserId();
    const row = await withTransaction(db, async (client): Promise<Row> => {
      const params: unknown[] = [];
      const p: AddParam = (value) => `$${params.push(value)}`;
      let result: Row | undefined;
      if (action === 'create') {
        const names = [...Object.keys(changes), 'created_by', 'updated_by'];
        const values = [...Object.values(changes).map((v) => p(v)), p(actor), p(actor)];
        result = (await client.query(`INSERT INTO ${table} (${names.map(quoteIdent).join(', ')}) VALUES (${values.join(', ')}) RETURNING *`, params))
          .rows[0] as Row;
      } else {
        const sets = Object.entries(changes).map(([column, value]) => `${quoteIdent(column)} = ${p(value)}`);
        sets.push(`updated_at = now()`, `updated_by = ${p(actor)}`);
        result = (await client.query(`UPDATE ${table} SET ${sets.join(', ')} WHERE id = ${p(id)} AND ${live} RETURNING *`, params)).rows[0];
      }
      if (!result) throw new BizError(Code.NOT_FOUND, `${options.noun} not found`);
      if (hooks.afterWrite) await hooks.afterWrite(client, result.id as number, input, action);
      // Computed fields reflect what afterWrite linked: read the row again inside the transaction.
      result = (await client.query({ text: `SELECT ${columns} FROM ${table} WHERE id = $1`, values: [result.id], types: textTimestamps })).rows[0] as Row;
      return result;
    });
    await hooks.afterCommit?.([row.id as number], action, input);
    await services.principals.invalidateAll();
    return row;
  };

  if (actions.has('create') && options.createSchema) {
    const schema = options.createSchema;
    router.post(options.path, { summary: `Create a ${options.noun}`, tags, buttons: buttonsFor('create') }, async (req) => {
      const row = await write('create', parseBody(schema, req.body));
      // The record, plus the createdId fast-soy-admin's clients read.
      return success({ ...(await records([row]))[0], createdId: ids.encode(row.id as number) }, 'created');
    });
  }

  if (actions.has('update') && options.updateSchema) {
    const schema = options.updateSchema;
    router.patch(`${options.path}/{id}`, { summary: `Update a ${options.noun}`, tags, buttons: buttonsFor('update') }, async (req) => {
      const id = ids.decode(param(req, 'id'));
      await loadOne(id);
      const row = await write('update', parseBody(schema, req.body), id);
      return success({ ...(await records([row]))[0], updatedId: ids.encode(id) }, 'updated');
    });
  }

  const remove = async (targets: number[]): Promise<number[]> => {
    if (targets.length && hooks.beforeDelete) await hooks.beforeDelete(targets);
    const sql = options.softDelete
      ? `UPDATE ${table} SET deleted_at = now(), updated_at = now() WHERE id = ANY($1) AND deleted_at IS NULL RETURNING id`
      : `DELETE FROM ${table} WHERE id = ANY($1) RETURNING id`;
    const { rows } = await db.query<{ id: number }>(sql, [targets]);
    const deleted = rows.map((r) => r.id);
    if (deleted.length) {
      await hooks.afterCommit?.(deleted, 'delete');
      await services.principals.invalidateAll();
    }
    return deleted;
  };

  if (actions.has('delete')) {
    router.delete(`${options.path}/{id}`, { summary: `Delete a ${options.noun}`, tags, buttons: buttonsFor('delete') }, async (req) => {
      const id = ids.decode(param(req, 'id'));
      await loadOne(id);
      await remove([id]);
      return success({ deletedId: ids.encode(id) }, 'deleted');
    });
  }

  if (actions.has('batchDelete')) {
    router.delete(options.path, { summary: `Delete several ${options.noun} records`, tags, buttons: buttonsFor('batchDelete') }, async (req) => {
      const body = parseBody(idsBody, req.body);
      const targets = body.ids.map((value, index) => ids.decode(value, `ids.${index}`));
      const params: unknown[] = [targets];
      const visible = await db.query<{ id: number }>(`SELECT id FROM ${table} WHERE id = ANY($1) AND ${visibleWhere(params).join(' AND ')}`, params);
      const deleted = await remove(visible.rows.map((r) => r.id));
      return success({ deletedCount: deleted.length, deletedIds: deleted.map((id) => ids.encode(id)) }, 'deleted');
    });
  }
}
