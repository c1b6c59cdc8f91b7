#!/usr/bin/env node
// Copies the monitoring sources (monitoring/) into the Helm chart, which can read only its own
// files: the alert rules become the PrometheusRule's spec, the dashboard the Grafana ConfigMap.
// test/monitoring checks that the copies are equal, so edit monitoring/ and run this script.
import { copyFileSync } from 'node:fs';

export const monitoringCopies = [
  ['monitoring/alerts.yaml', 'charts/keelson/files/alerts.yaml'],
  ['monitoring/grafana-dashboard.json', 'charts/keelson/dashboards/keelson.json'],
];

if (import.meta.url === `file://${process.argv[1]}`) {
  for (const [from, to] of monitoringCopies) {
    copyFileSync(from, to);
    console.log(`${from} -> ${to}`);
  }
}
