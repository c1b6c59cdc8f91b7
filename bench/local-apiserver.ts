/**
 * Local API server stand-in benchmark (not run in CI). Prints:
 * - server start time (certificates included),
 * - Lease renewals per second (GET + PUT with resourceVersion CAS) through client-node,
 * - write-to-watch-event latency (p50/p99) for a raw watch,
 * - time to list 1000 ConfigMaps as JSON and as a kubectl Table.
 *
 *   node --import tsx bench/local-apiserver.ts     (BENCH_ROUNDS=500, BENCH_HTTP=1 for plain HTTP)
 *
 * client-node 1.4 opens a new connection per request, so over HTTPS each call pays a TLS handshake.
 *
 * Client and server share one event loop here, so figures are a lower bound for a separate process.
 */
import * as k8s from '@kubernetes/client-node';
import { kubeRequest, microTime, openWatch, startTestApiServer } from '../test/support/kube.js';

const rounds = Number(process.env.BENCH_ROUNDS ?? 500);

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

const started = performance.now();
const server = await startTestApiServer({ https: process.env.BENCH_HTTP !== '1' });
console.log(`${process.env.BENCH_HTTP === '1' ? 'HTTP' : 'HTTPS'} start: ${(performance.now() - started).toFixed(0)} ms`);
try {
  const leases = server.kubeConfig.makeApiClient(k8s.CoordinationV1Api);
  await leases.createNamespacedLease({
    namespace: 'default',
    body: { metadata: { name: 'bench' }, spec: { holderIdentity: 'a', leaseDurationSeconds: 10, renewTime: microTime() } },
  });
  let t = performance.now();
  for (let i = 0; i < rounds; i += 1) {
    const lease = await leases.readNamespacedLease({ name: 'bench', namespace: 'default' });
    await leases.replaceNamespacedLease({ name: 'bench', namespace: 'default', body: { ...lease, spec: { ...lease.spec, renewTime: microTime() } } });
  }
  console.log(`lease renewals (GET+PUT): ${(rounds / ((performance.now() - t) / 1000)).toFixed(0)}/s over ${rounds}`);

  const watch = await openWatch(server, '/api/v1/namespaces/default/configmaps?watch=true');
  const latencies: number[] = [];
  for (let i = 0; i < rounds; i += 1) {
    const before = watch.events.length;
    const sent = performance.now();
    await kubeRequest(server, 'POST', '/api/v1/namespaces/default/configmaps', { body: { metadata: { name: `w-${i}` } } });
    await watch.waitFor(before + 1);
    latencies.push(performance.now() - sent);
  }
  watch.stop();
  console.log(`create -> watch event: p50 ${percentile(latencies, 50).toFixed(2)} ms, p99 ${percentile(latencies, 99).toFixed(2)} ms`);

  for (let i = rounds; i < 1000; i += 1) await kubeRequest(server, 'POST', '/api/v1/namespaces/default/configmaps', { body: { metadata: { name: `w-${i}` } } });
  t = performance.now();
  const list = await kubeRequest(server, 'GET', '/api/v1/namespaces/default/configmaps');
  const listMs = performance.now() - t;
  t = performance.now();
  await kubeRequest(server, 'GET', '/api/v1/namespaces/default/configmaps', { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json' });
  console.log(
    `list ${(list.body as { items: unknown[] }).items.length} configmaps: ${listMs.toFixed(1)} ms JSON, ${(performance.now() - t).toFixed(1)} ms Table`,
  );
} finally {
  await server.close();
}
