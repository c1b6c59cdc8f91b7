import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { builtinCollectorSources, builtinOrigin } from '../../../sidecar/exporter/collectors/index.js';
import { parseCollectorSources } from '../../../sidecar/exporter/config/load.js';
import { startPostgres, type TestPostgres } from '../../support/postgres.js';
import { get, parseMetrics, startTestExporter } from './helpers.js';

/** Labels naming objects that the workload creates: series with them grow with the workload. */
const workloadLabels = new Set(['queryid', 'relname', 'indexrelname', 'funcname', 'query']);
const statementLimit = 64;

describe('built-in collectors: series that grow with the workload are bounded', () => {
  it('every collector labelled by statement, table, index or function has a LIMIT its description states', () => {
    const set = parseCollectorSources(builtinCollectorSources(), builtinOrigin, true);
    const growing = set.collectors.filter((c) => c.columns.some((col) => col.usage === 'LABEL' && workloadLabels.has(col.name)));
    assert.ok(growing.length >= 2, 'the per-statement and per-table collectors are among the built-in set');
    for (const collector of growing) {
      const limit = /\bLIMIT\s+(\d+)\s*$/i.exec(collector.query)?.[1];
      assert.ok(limit, `${collector.branch}: no LIMIT at the end of its query`);
      assert.ok(collector.desc.includes(limit), `${collector.branch}: description does not state its limit ${limit}`);
    }
  });

  describe('against PostgreSQL with pg_stat_statements', () => {
    let pg: TestPostgres;
    before(async () => {
      pg = await startPostgres({ settings: { shared_preload_libraries: `'pg_stat_statements'` } });
      await pg.query('CREATE EXTENSION pg_stat_statements');
    });
    after(async () => {
      await pg?.stop();
    });

    it(`pg_query reports at most ${statementLimit} statements however many the workload runs`, async () => {
      // 150 distinct statements (constants are normalised away, so they differ in their number of
      // columns), each run often enough (calls > 4) to qualify.
      const statements = Array.from({ length: 150 }, (_, i) => `SELECT ${Array.from({ length: i + 1 }, () => '1').join(', ')};`);
      for (let n = 0; n < 5; n++) await pg.query(statements.join('\n'));
      const running = await startTestExporter({ url: pg.url, 'auto-discovery': 'false' });
      try {
        const m = parseMetrics((await get(`${running.url}/metrics`)).body);
        const reported = new Set((m.families.get('pg_query_calls')?.metrics ?? []).map((s) => s.labels?.queryid));
        assert.ok(reported.size > 0, 'pg_query reports statements');
        assert.ok(reported.size <= statementLimit, `pg_query reported ${reported.size} statements`);
      } finally {
        await running.close();
      }
    });
  });
});
