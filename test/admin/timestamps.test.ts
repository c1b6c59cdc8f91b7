import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { formatTime, recordMapper, auditFields } from '../../admin/resources/records.js';
import { createIdCodec } from '../../admin/resources/ids.js';
import { createPool, type Db } from '../../admin/db/pool.js';
import { textTimestamps, utcTimestampParts } from '../../admin/db/timestamps.js';
import { startPostgres, type TestPostgres } from '../support/postgres.js';

// Reads take timestamptz as text and build ms + display text without a Date (ADR 0206): the records
// must equal what the Date path gives, for every precision, in UTC and in other session zones.
describe('admin timestamps as text', () => {
  let pg: TestPostgres;
  let db: Db;
  const samples = [
    '2026-11-22 22:57:01.123456+00',
    '2026-11-22 22:57:01.1+00',
    '2026-11-22 22:57:01.999999+00',
    '2026-11-22 22:57:01+00',
    '2024-02-29 00:00:00.0005+00',
    '1970-01-01 00:00:00+00',
    '2000-06-30 23:59:59.25+05:30',
    'infinity',
  ];
  const mapper = recordMapper({ createdAt: auditFields.createdAt }, createIdCodec('timestamps-test'));

  before(async () => {
    pg = await startPostgres();
    db = createPool(pg.url, { max: 2 });
  });
  after(async () => {
    await db?.end();
    await pg?.stop();
  });

  it('UTC text gives the ms and display text a Date gives; other shapes are left to pg', () => {
    const parts = utcTimestampParts('2026-11-22 22:57:01.123456+00');
    assert.deepEqual(parts, { ms: Date.UTC(2026, 10, 22, 22, 57, 1, 123), text: '2026-11-22 22:57:01' });
    for (const other of [
      '2000-06-30 23:59:59+05:30',
      '0044-03-15 12:00:00+00 BC',
      'infinity',
      '2026-11-22T22:57:01+00',
      '2026-11-22 22:57:01.+00',
      '2026-11-22 22:57:0x+00',
    ]) {
      assert.equal(utcTimestampParts(other), undefined, other);
    }
  });

  for (const zone of ['UTC', 'Asia/Kolkata']) {
    it(`records from text equal records from Dates (session zone ${zone})`, async () => {
      const client = await db.connect();
      try {
        await client.query(`SET TimeZone = '${zone}'`);
        for (const sample of samples) {
          const sql = { text: 'SELECT $1::timestamptz AS created_at', values: [sample] };
          const asText = (await client.query({ ...sql, types: textTimestamps })).rows[0];
          const asDate = (await client.query(sql)).rows[0];
          assert.equal(typeof asText.created_at, 'string', sample);
          const expected =
            asDate.created_at instanceof Date ? { createdAt: asDate.created_at.getTime(), fmtCreatedAt: formatTime(asDate.created_at) } : { createdAt: null };
          assert.deepEqual(mapper(asText), expected, `${sample} read as ${asText.created_at}`);
          assert.deepEqual(mapper(asDate), expected, sample);
        }
      } finally {
        // Back to the startup option's zone (UTC) for the next user of this pooled connection.
        await client.query('RESET TimeZone');
        client.release();
      }
    });
  }

  it('admin sessions run in UTC, so reads take the fast path', async () => {
    const { rows } = await db.query({ text: "SELECT '2026-11-22 23:00:00.5+01'::timestamptz AS t", types: textTimestamps });
    assert.equal(rows[0].t, '2026-11-22 22:00:00.5+00');
    assert.deepEqual(utcTimestampParts(rows[0].t as string), { ms: Date.UTC(2026, 10, 22, 22, 0, 0, 500), text: '2026-11-22 22:00:00' });
  });
});
