import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { renderChart, type K8sDoc } from '../charts/render.js';
import { exportedMetricNames, metricsInExpression } from './exported-metrics.js';

/** The Grafana dashboard: every query on an exported metric, the cluster's health on it, filterable by cluster. */

interface Panel {
  title: string;
  targets: Array<{ expr: string }>;
}
interface Dashboard {
  panels: Panel[];
  templating: { list: Array<{ name: string; query: string }> };
}

const source = readFileSync(new URL('../../monitoring/grafana-dashboard.json', import.meta.url), 'utf8');
const dashboard = JSON.parse(source) as Dashboard;
const queries = dashboard.panels.flatMap((p) => p.targets.map((t) => ({ panel: p.title, expr: t.expr })));

describe('monitoring/grafana-dashboard.json', () => {
  it('queries only metrics that ha-node, the exporter or the operator export', async () => {
    const { haNode, exporter, operator } = await exportedMetricNames();
    assert.ok(queries.length >= 20, `${queries.length} queries`);
    for (const { panel, expr } of queries) {
      const used = metricsInExpression(expr);
      assert.ok(used.length > 0, `${panel}: selects a metric`);
      for (const name of used) assert.ok(haNode.has(name) || exporter.has(name) || operator.has(name), `${panel}: ${name} is exported`);
    }
  });

  it('filters every PostgreSQL and ha-node series by the cluster variable', () => {
    const cluster = dashboard.templating.list.find((v) => v.name === 'cluster');
    assert.equal(cluster?.query, 'label_values(ha_primary, scope)');
    let memberSelectors = 0;
    for (const { panel, expr } of queries) {
      for (const match of expr.matchAll(/\b((?:ha|pg)_[a-z_]+)(\{[^}]*\})?/g)) {
        memberSelectors += 1;
        assert.match(match[2] ?? '', /scope=~"\$cluster"/, `${panel}: ${match[1]} is filtered by cluster`);
      }
    }
    assert.ok(memberSelectors >= 20, `${memberSelectors} member selectors`);
  });

  it('shows the cluster, not only the operator: roles, lag, connections, TPS, failovers, WAL rate', () => {
    const used = new Set(queries.flatMap((q) => metricsInExpression(q.expr)));
    const titles = dashboard.panels.map((p) => p.title);
    const wanted: Array<[string, string]> = [
      ['Role per member', 'ha_replica'],
      ['Replication lag (bytes)', 'ha_xlog_replayed_location'],
      ['Connections', 'pg_activity_count'],
      ['Transactions per second', 'pg_db_xact_commit'],
      ['Failovers and switchovers', 'ha_db_timeline'],
      ['WAL rate', 'pg_wal_bytes'],
    ];
    for (const [title, metric] of wanted) {
      assert.ok(titles.includes(title), `panel ${title}`);
      assert.ok(used.has(metric), `${metric} is queried`);
    }
  });

  it('is the dashboard the chart ships', () => {
    assert.equal(readFileSync(new URL('../../charts/keelson/dashboards/keelson.json', import.meta.url), 'utf8'), source, 'node scripts/sync-monitoring.mjs');
    const configMap = renderChart().find((d) => d.kind === 'ConfigMap' && d.metadata.name === 'keelson-dashboard') as K8sDoc & { data: Record<string, string> };
    assert.deepEqual(JSON.parse(configMap.data['keelson.json']!), dashboard);
  });
});
