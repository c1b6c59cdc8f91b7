import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { parse } from 'yaml';
import { startPostgres, type TestPostgres } from '../support/postgres.js';
import { get, parseMetrics, startTestExporter } from '../sidecar/exporter/helpers.js';
import { metricsInExpression } from './exported-metrics.js';

/**
 * The pg_* metrics the dashboard and the alert rules use, scraped from a real exporter with its
 * built-in collectors against a real PostgreSQL 15: a collector that fails on this version, or a
 * name that only exists on paper, would leave a panel or an alert blind.
 */
describe('monitoring queries against a real exporter', () => {
  let pg: TestPostgres;
  let exporter: Awaited<ReturnType<typeof startTestExporter>>;

  before(async () => {
    pg = await startPostgres();
    exporter = await startTestExporter({ url: pg.url, 'auto-discovery': 'false' });
  });

  after(async () => {
    await exporter?.close();
    await pg?.stop();
  });

  it('serves every pg_* family the dashboard and the alerts query', async () => {
    const dashboard = JSON.parse(readFileSync(new URL('../../monitoring/grafana-dashboard.json', import.meta.url), 'utf8')) as {
      panels: Array<{ targets: Array<{ expr: string }> }>;
    };
    const rules = (
      parse(readFileSync(new URL('../../monitoring/alerts.yaml', import.meta.url), 'utf8')) as { groups: Array<{ rules: Array<{ expr: string }> }> }
    ).groups.flatMap((g) => g.rules);
    const expressions = [...dashboard.panels.flatMap((p) => p.targets.map((t) => t.expr)), ...rules.map((r) => r.expr)];
    const wanted = new Set(expressions.flatMap(metricsInExpression).filter((name) => name.startsWith('pg_')));
    assert.ok(wanted.size >= 8, `${wanted.size} pg_* families used`);
    const scrape = await get(`${exporter.url}/metrics`);
    assert.equal(scrape.status, 200);
    const families = parseMetrics(scrape.body).families;
    for (const name of wanted) assert.ok((families.get(name)?.metrics.length ?? 0) > 0, `${name} has samples`);
    assert.equal(families.get('pg_up')?.metrics[0]?.value, '1');
  });
});
