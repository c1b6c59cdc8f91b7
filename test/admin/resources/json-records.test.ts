import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createIdCodec } from '../../../admin/resources/ids.js';
import { jsonRecords, pageEnvelopeText } from '../../../admin/resources/json-records.js';
import { auditFields, recordMapper, type FieldDef, type FieldKind, type Fields } from '../../../admin/resources/records.js';
import { createPool, type Db } from '../../../admin/db/pool.js';
import { textTimestamps } from '../../../admin/db/timestamps.js';
import { startPostgres, type TestPostgres } from '../../support/postgres.js';

// Search pages rendered by PostgreSQL (ADR 0208) must hold the records the mapper makes from the
// same rows: every field kind, nulls, 0 ids, awkward text, and times at every precision and edge.
describe('admin records rendered as JSON by PostgreSQL', () => {
  let pg: TestPostgres;
  let db: Db;
  const ids = createIdCodec('json-records-test');
  const field = (column: string, kind: FieldKind, output = true): FieldDef => ({ column, kind, output });
  const fields: Fields = {
    id: field('id', 'id'),
    parentId: field('parent_id', 'id'),
    name: field('name', 'text'),
    secret: field('secret', 'text', false),
    order: field('order', 'int'),
    enabled: field('enabled', 'bool'),
    routeParam: field('route_param', 'json'),
    tags: field('tags', 'textArray'),
    lastSeen: field('last_seen', 'time'),
    ...auditFields,
  };
  const computed = { linkCodes: `COALESCE((SELECT json_agg(l.code ORDER BY l.code) FROM links l WHERE l.item_id = items.id), '[]')` };
  const times = [
    null,
    '2026-11-22 22:57:01.123456+00',
    '2026-11-22 22:57:01.999999+00',
    '2026-11-22 22:57:01.329+00',
    '2024-02-29 00:00:00.0005+00',
    '1969-12-31 23:59:59.9995+00',
    '1960-01-01 00:00:00.001+00',
    '1970-01-01 00:00:00+00',
    '2000-06-30 23:59:59.25+05:30',
    '1000-01-01 00:00:00+00',
    '9999-12-31 23:59:59.999999+00',
    'infinity',
    '-infinity',
  ];
  // jsonb values as JSON text (null: SQL NULL); one carries a key shaped like a time's fmt key.
  const jsonValues = [null, JSON.stringify({ a: 1, fmtLastSeen: null, nested: ['x', 2, null] }), '[]', '"text"'];
  const names = [null, '', 'plain', 'quote " backslash \\ slash /', 'line\nbreak\ttab\u0001ctl', 'ünïcödé ✓ 𝄞', '"fmtLastSeen":null', '<script>'];

  before(async () => {
    pg = await startPostgres();
    db = createPool(pg.url, { max: 2 });
    await db.query(`CREATE TABLE items (
      id serial PRIMARY KEY, parent_id integer, name text, secret text, "order" integer, enabled boolean,
      route_param jsonb, tags text[], last_seen timestamptz,
      created_by integer, created_at timestamptz NOT NULL DEFAULT now(), updated_by integer, updated_at timestamptz NOT NULL DEFAULT now())`);
    await db.query('CREATE TABLE links (item_id integer, code text)');
    for (let i = 0; i < times.length; i++) {
      await db.query(
        `INSERT INTO items (parent_id, name, secret, "order", enabled, route_param, tags, last_seen, created_by, created_at, updated_by, updated_at)
         VALUES ($1, $2, 'hidden', $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
        [
          [null, 0, 7][i % 3],
          names[i % names.length],
          [null, 0, -5, 2147483647][i % 4],
          [null, true, false][i % 3],
          jsonValues[i % jsonValues.length],
          [null, [], ['a', 'b "c"', 'NULL'], ['ü']][i % 4],
          times[i],
          [null, 0, 1][i % 3],
          times[(i + 1) % times.length] ?? '2026-01-01 00:00:00+00',
          [null, 3, 0][i % 3],
          times[(i + 2) % times.length] ?? '2026-01-01 00:00:00+00',
        ],
      );
    }
    await db.query(`INSERT INTO links SELECT id, 'c' || g FROM items, generate_series(1, 2) g WHERE id % 2 = 0`);
  });
  after(async () => {
    await db?.end();
    await pg?.stop();
  });

  it('renders every row as the mapper would make it', async () => {
    const query = jsonRecords('items', fields, ids, computed);
    const write = (row: unknown[]): string => query.write(row);
    const rendered = await db.query<unknown[]>({ text: `SELECT ${query.select} FROM items ORDER BY id`, rowMode: 'array' });
    const mapper = recordMapper(fields, ids);
    const objects = await db.query({ text: `SELECT items.*, (${computed.linkCodes}) AS "linkCodes" FROM items ORDER BY id`, types: textTimestamps });
    assert.equal(rendered.rows.length, times.length);
    rendered.rows.forEach((row, i) => {
      const expected = { ...mapper(objects.rows[i]), linkCodes: objects.rows[i].linkCodes };
      const text = write(row);
      assert.deepEqual(JSON.parse(text), expected, `row ${i}: ${text}`);
      assert.equal('secret' in JSON.parse(text), false);
    });
  });

  it('a row with no time or other fields is still an object', async () => {
    const idsOnly: Fields = { id: { column: 'id', kind: 'id' } };
    const query = jsonRecords('items', idsOnly, ids);
    const { rows } = await db.query<unknown[]>({ text: `SELECT ${query.select} FROM items ORDER BY id LIMIT 1`, rowMode: 'array' });
    assert.deepEqual(JSON.parse(query.write(rows[0])), { id: ids.encode(1) });
    const nameOnly: Fields = { name: { column: 'name', kind: 'text' } };
    const nameQuery = jsonRecords('items', nameOnly, ids);
    const named = await db.query<unknown[]>({ text: `SELECT ${nameQuery.select} FROM items ORDER BY id LIMIT 1`, rowMode: 'array' });
    assert.deepEqual(JSON.parse(nameQuery.write(named.rows[0])), { name: null });
  });

  it('refuses field names SQL could not render as plain JSON keys', () => {
    assert.throws(() => jsonRecords('items', { 'bad"name': { column: 'name', kind: 'text' } }, ids), /cannot be rendered/);
    assert.throws(() => jsonRecords('items', { when: { column: 'last_seen', kind: 'time' } }, ids, { "x'y": 'null' }), /cannot be rendered/);
  });

  it('wraps rendered records in the page envelope', () => {
    const text = pageEnvelopeText(['{"a":1}', '{"a":2}'], 12, 2, 2);
    assert.deepEqual(JSON.parse(text), { code: '0000', msg: 'OK', data: { records: [{ a: 1 }, { a: 2 }], total: 12, current: 2, size: 2 } });
    assert.deepEqual(JSON.parse(pageEnvelopeText([], 0, 1, 10)).data.records, []);
  });
});
