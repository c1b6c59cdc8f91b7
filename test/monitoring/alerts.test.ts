import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { parse } from 'yaml';
import { renderChart, type K8sDoc } from '../charts/render.js';
import { exportedMetricNames, metricsInExpression } from './exported-metrics.js';

/** The shipped alert rules: valid for promtool, unit-tested, on metrics the code exports, and in the chart unchanged. */

interface Rule {
  alert: string;
  expr: string;
  for?: string;
  labels: { severity: string };
  annotations: { summary: string; description: string };
}
interface RuleFile {
  groups: Array<{ name: string; rules: Rule[] }>;
}
interface UnitTests {
  tests: Array<{ alert_rule_test?: Array<{ alertname: string; exp_alerts?: unknown[] }> }>;
}

const monitoring = new URL('../../monitoring/', import.meta.url);
const read = (name: string): string => readFileSync(new URL(name, monitoring), 'utf8');
const rules = (): Rule[] => (parse(read('alerts.yaml')) as RuleFile).groups.flatMap((g) => g.rules);

/** Metrics the rules may use that other components export: Prometheus's own `up` and the kubelet's volume statistics. */
const external = new Set(['up', 'kubelet_volume_stats_available_bytes', 'kubelet_volume_stats_capacity_bytes']);

function promtool(...args: string[]): string {
  try {
    return execFileSync('promtool', args, { cwd: monitoring, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string; code?: string };
    if (e.code === 'ENOENT') throw new Error('promtool not found: apt-get install prometheus', { cause: err });
    throw new Error(`promtool ${args.join(' ')} failed:\n${e.stdout ?? ''}${e.stderr ?? ''}`, { cause: err });
  }
}

describe('monitoring/alerts.yaml', () => {
  it('covers the day-one problems of a cluster and of the operator', () => {
    const names = rules().map((r) => r.alert);
    for (const wanted of [
      'KeelsonNoPrimary',
      'KeelsonPrimaryFlapping',
      'KeelsonReplicaLagHigh',
      'KeelsonReplicaNotStreaming',
      'KeelsonInstanceDown',
      'KeelsonPendingRestart',
      'KeelsonExporterScrapeFailing',
      'KeelsonConnectionsNearMax',
      'KeelsonTransactionIdAgeHigh',
      'KeelsonDiskAlmostFull',
      'KeelsonOperatorReconcileErrors',
      'KeelsonVolumeNearlyFull',
      'KeelsonVolumeFull',
      'KeelsonWalPilingUpUnarchived',
    ])
      assert.ok(names.includes(wanted), `${wanted} is shipped`);
    assert.equal(new Set(names).size, names.length, 'alert names are unique');
    for (const rule of rules()) {
      assert.match(rule.labels.severity, /^(critical|warning|info)$/, `${rule.alert} severity`);
      assert.ok(rule.annotations.summary && rule.annotations.description, `${rule.alert} says what is wrong`);
    }
  });

  it('passes promtool check rules', () => {
    assert.match(promtool('check', 'rules', 'alerts.yaml'), new RegExp(`SUCCESS: ${rules().length} rules found`));
  });

  it('fires and stays quiet as its promtool unit tests expect, one firing case per alert', () => {
    const tests = (parse(read('alerts-tests.yaml')) as UnitTests).tests.flatMap((t) => t.alert_rule_test ?? []);
    for (const rule of rules()) {
      assert.ok(
        tests.some((t) => t.alertname === rule.alert && (t.exp_alerts?.length ?? 0) > 0),
        `${rule.alert} has a case where it fires`,
      );
    }
    assert.match(promtool('test', 'rules', 'alerts-tests.yaml'), /SUCCESS/);
  });

  it('uses only metrics ha-node, the exporter and the operator export', async () => {
    const { haNode, exporter, operator } = await exportedMetricNames();
    for (const rule of rules()) {
      const used = metricsInExpression(rule.expr);
      assert.ok(used.length > 0, `${rule.alert} selects a metric`);
      for (const name of used) {
        assert.ok(haNode.has(name) || exporter.has(name) || operator.has(name) || external.has(name), `${rule.alert}: ${name} is exported`);
      }
    }
  });

  it('ships in the chart as a PrometheusRule with the same rules, when enabled', () => {
    const chartCopy = readFileSync(new URL('../../charts/keelson/files/alerts.yaml', import.meta.url), 'utf8');
    assert.equal(chartCopy, read('alerts.yaml'), 'charts/keelson/files/alerts.yaml is a copy (node scripts/sync-monitoring.mjs)');
    assert.ok(!renderChart().some((d) => d.kind === 'PrometheusRule'), 'off by default: it needs the Prometheus Operator CRDs');
    const docs = renderChart({ prometheusRule: { enabled: true, labels: { release: 'kube-prometheus-stack' } } });
    const rule = docs.find((d) => d.kind === 'PrometheusRule') as (K8sDoc & { spec: RuleFile }) | undefined;
    assert.ok(rule, 'PrometheusRule rendered');
    assert.equal(rule.apiVersion, 'monitoring.coreos.com/v1');
    assert.equal(rule.metadata.labels?.release, 'kube-prometheus-stack');
    assert.deepEqual(rule.spec, parse(read('alerts.yaml')));
  });
});

describe('metricsInExpression', () => {
  it('finds selected metrics and skips functions, keywords, labels and durations', () => {
    assert.deepEqual(
      metricsInExpression(
        'sum by (scope) (rate(pg_db_xact_commit{scope=~"$cluster", x="a_b"}[5m])) / on (scope) group_right () max(ha_primary offset 1h) > 1e9',
      ),
      ['pg_db_xact_commit', 'ha_primary'],
    );
  });
});
