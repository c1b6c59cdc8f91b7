/**
 * Operator reconcile benchmark (not run in CI). Against the API server stand-in (no pods run),
 * prints:
 * - time for N DatabaseClusters to have all owned objects and a status,
 * - the reconcile duration histogram's mean and the number of API writes for that,
 * - API writes and reconciles during an idle window of full relists (writes should be 0).
 *
 *   node --import tsx bench/operator-reconcile.ts      (BENCH_CLUSTERS=20, BENCH_IDLE_S=10)
 *
 * Operator, client and server share one event loop, so figures are a lower bound.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { createLogger } from '../lib/log.js';
import { group, plural, version } from '../api/crd/types.js';
import { OperatorKubeApi } from '../operator/kube-api.js';
import { runOperator } from '../operator/run.js';
import { startTestApiServer } from '../test/support/kube.js';

const clusters = Number(process.env.BENCH_CLUSTERS ?? 20);
const idleSeconds = Number(process.env.BENCH_IDLE_S ?? 10);
const run = promisify(execFile);

async function metric(url: string, name: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  return text
    .split('\n')
    .filter((l) => l.startsWith(`${name}{`) || l.startsWith(`${name} `))
    .reduce((sum, l) => sum + Number(l.split(' ').pop()), 0);
}

const server = await startTestApiServer();
const api = new OperatorKubeApi(server.kubeConfig);
await run('kubectl', ['--kubeconfig', server.kubeconfigPath, '--cache-dir', `${server.kubeconfigPath}.cache`, 'apply', '-f', 'crds/']);
const operator = await runOperator({
  kubeconfig: server.kubeconfigPath,
  namespaces: [],
  leaderElect: false,
  leaseNamespace: 'default',
  leaseName: 'bench',
  health: { host: '127.0.0.1', port: 0 },
  metrics: { host: '127.0.0.1', port: 0 },
  relistIntervalMs: 2_000,
  operatorVersion: 'bench',
  logger: createLogger({ name: 'bench', level: 'silent' }),
});
try {
  const started = performance.now();
  for (let i = 0; i < clusters; i += 1) {
    await api.custom.createNamespacedCustomObject({
      group,
      version,
      namespace: 'default',
      plural,
      body: { apiVersion: `${group}/${version}`, kind: 'DatabaseCluster', metadata: { name: `c${i}` }, spec: { instances: 3 } },
    });
  }
  for (;;) {
    const list = await api.listClusters('default');
    if (list.items.filter((c) => (c.status as { phase?: string } | undefined)?.phase).length === clusters) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  const convergeMs = performance.now() - started;
  const writes = await metric(operator.metricsUrl, 'keelson_operator_api_writes_total');
  const count = await metric(operator.metricsUrl, 'keelson_operator_reconcile_duration_seconds_count');
  const sum = await metric(operator.metricsUrl, 'keelson_operator_reconcile_duration_seconds_sum');
  console.log(
    `${clusters} clusters converged in ${convergeMs.toFixed(0)} ms (${(convergeMs / clusters).toFixed(1)} ms per cluster), ${writes} API writes (${(writes / clusters).toFixed(1)} per cluster)`,
  );
  console.log(`reconciles so far: ${count}, mean duration ${((sum / count) * 1000).toFixed(1)} ms`);
  await new Promise((r) => setTimeout(r, 3_000)); // let status settle
  const w0 = await metric(operator.metricsUrl, 'keelson_operator_api_writes_total');
  const r0 = await metric(operator.metricsUrl, 'keelson_operator_reconcile_total');
  await new Promise((r) => setTimeout(r, idleSeconds * 1000));
  const w1 = await metric(operator.metricsUrl, 'keelson_operator_api_writes_total');
  const r1 = await metric(operator.metricsUrl, 'keelson_operator_reconcile_total');
  console.log(`idle ${idleSeconds} s with relist every 2 s: ${r1 - r0} reconciles, ${w1 - w0} API writes`);
} finally {
  await operator.stop();
  await server.close();
}
