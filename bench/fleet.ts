/**
 * Fleet benchmark (not run in CI): one operator process reconciling 10, 100 and 1,000
 * DatabaseClusters of 3 instances, with pods faked (bench/fleet/fake-node.ts: Ready pods and an
 * ha-node REST stand-in; no PostgreSQL). Every request of the operator passes a counting proxy.
 * Prints one row per fleet size:
 * - convergence: clusters created → every owned object created, and → every cluster Healthy,
 * - API requests per idle resync: gets and lists per cluster, and writes (all clusters),
 * - spec-change latency (a changed spec.ha field → status.observedGeneration) p50/p99 while the
 *   fleet resyncs,
 * - operator RSS, and CPU while idle per cluster.
 *
 *   node --import tsx bench/fleet.ts
 *     FLEET_SIZES=10,100,1000  FLEET_SERVER=oracle|standin (oracle when built)
 *     FLEET_OPERATOR_DIR=<checkout whose operator to run> (default: this one)
 *     FLEET_RELIST_S=20 (the operator's --relist-interval)  FLEET_WINDOW_S=40  FLEET_TIMEOUT_S=600
 *
 * The API server (the oracle's kube-apiserver and etcd, or the in-process stand-in) shares the
 * machine's cores with the operator, so times are upper bounds; request counts do not depend on it.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { AppsV1Api } from '@kubernetes/client-node';
import { mergePatch } from '../local/controllers/kube.js';
import { renderKubeconfig } from '../local/apiserver/security/kubeconfig.js';
import { group, plural, version } from '../api/crd/types.js';
import { parseDatabaseCluster } from '../api/crd/validate.js';
import { desiredObjects } from '../operator/builders/index.js';
import { credentialKindsOf } from '../operator/builders/secrets.js';
import { OperatorKubeApi } from '../operator/kube-api.js';
import { FakeHaNodes, startFakeKubelet } from './fleet/fake-node.js';
import { processUsage } from './fleet/process.js';
import { startCountingProxy } from './fleet/proxy.js';
import { formatTable, type Row } from './fleet/table.js';
import { defaultServerKind, startBenchServer } from './fleet/servers.js';

const sizes = (process.env.FLEET_SIZES ?? '10,100,1000').split(',').map(Number);
const serverKind = (process.env.FLEET_SERVER as 'oracle' | 'standin' | undefined) ?? defaultServerKind();
const operatorDir = resolve(process.env.FLEET_OPERATOR_DIR ?? '.');
const relistSeconds = Number(process.env.FLEET_RELIST_S ?? 20);
const windowSeconds = Number(process.env.FLEET_WINDOW_S ?? 40);
const timeoutMs = Number(process.env.FLEET_TIMEOUT_S ?? 600) * 1000;
const namespace = 'fleet';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(check: () => Promise<boolean>, limitMs: number): Promise<number | undefined> {
  const started = performance.now();
  while (performance.now() - started < limitMs) {
    if (await check()) return performance.now() - started;
    await sleep(250);
  }
  return undefined;
}

async function metric(url: string, name: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  return text
    .split('\n')
    .filter((l) => l.startsWith(`${name}{`) || l.startsWith(`${name} `))
    .reduce((sum, l) => sum + Number(l.split(' ').pop()), 0);
}

async function runFleet(clusters: number): Promise<Row> {
  const server = await startBenchServer(serverKind);
  const dir = mkdtempSync(join(tmpdir(), 'keelson-fleet-'));
  const admin = new OperatorKubeApi(server.kubeConfig);
  const cleanups: Array<() => Promise<void> | void> = [() => server.close(), () => rmSync(dir, { recursive: true, force: true })];
  try {
    await admin.core.createNamespace({ body: { metadata: { name: namespace } } });
    const proxy = await startCountingProxy(server.url, server.token, server.caCert);
    cleanups.unshift(() => proxy.close());
    const haNodes = new FakeHaNodes();
    cleanups.unshift(() => haNodes.close());
    cleanups.unshift(startFakeKubelet(server.kubeConfig.makeApiClient(AppsV1Api), admin.core, namespace, haNodes, clusters));
    const kubeconfig = join(dir, 'operator-kubeconfig');
    writeFileSync(kubeconfig, renderKubeconfig({ server: proxy.url, token: 'via-proxy', contextName: 'fleet' }));
    const metricsPort = 20_000 + Math.floor(Math.random() * 20_000);
    const operator = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        'bin/keelson.ts',
        'operator',
        '--kubeconfig',
        kubeconfig,
        '--no-leader-elect',
        '--watch-namespace',
        namespace,
        '--health-address',
        '127.0.0.1:0',
        '--metrics-address',
        `127.0.0.1:${metricsPort}`,
        '--relist-interval',
        String(relistSeconds),
      ],
      { cwd: operatorDir, env: { ...process.env, LOG_LEVEL: process.env.FLEET_OPERATOR_LOG ?? 'error' }, stdio: ['ignore', 'ignore', 'inherit'] },
    );
    children.add(operator.pid!);
    const stopped = new Promise((r) => operator.once('exit', () => r(children.delete(operator.pid!))));
    cleanups.unshift(async () => {
      operator.kill('SIGTERM');
      await stopped;
    });
    const metricsUrl = `http://127.0.0.1:${metricsPort}`;
    await until(async () => (await fetch(`${metricsUrl}/metrics`).catch(() => undefined))?.ok === true, 60_000);

    const spec = { instances: 3 };
    const body = (name: string) => ({ apiVersion: `${group}/${version}`, kind: 'DatabaseCluster', metadata: { name, namespace }, spec });
    // What one cluster's pass creates: the builders' objects and the generated Secrets.
    const probe = { cluster: parseDatabaseCluster({ ...body('probe'), metadata: { name: 'probe', namespace, uid: 'probe' } }), operatorVersion: 'bench' };
    const perCluster = { count: desiredObjects(probe, await admin.capabilities()).length + credentialKindsOf(probe).length };

    const started = performance.now();
    for (let i = 0; i < clusters; i += 20) {
      await Promise.all(
        Array.from({ length: Math.min(20, clusters - i) }, (_, j) =>
          admin.custom.createNamespacedCustomObject({ group, version, namespace, plural, body: body(`c${i + j}`) }),
        ),
      );
    }
    const sinceStart = (reached: number | undefined) => (reached === undefined ? undefined : performance.now() - started);
    const ownedMs = sinceStart(await until(async () => proxy.tally.created >= clusters * perCluster.count, timeoutMs));
    const healthy = async () =>
      (await admin.listClusters(namespace)).items.filter((c) => (c.status as { phase?: string } | undefined)?.phase === 'Healthy').length === clusters;
    const healthyMs = sinceStart(await until(healthy, timeoutMs));

    // Settled: no write for two seconds beyond a relist period, then one idle window.
    await until(async () => {
      const before = proxy.tally.write;
      await sleep(relistSeconds * 1000 + 2_000);
      return proxy.tally.write === before;
    }, timeoutMs);
    proxy.reset();
    haNodes.reset();
    const reconcilesBefore = await metric(metricsUrl, 'keelson_operator_reconcile_total');
    const cpuBefore = processUsage(operator.pid!);
    await sleep(windowSeconds * 1000);
    const idle = proxy.reset();
    const haCalls = [...haNodes.reset().values()].reduce((sum, n) => sum + n, 0);
    const cpuAfter = processUsage(operator.pid!);
    const reconciles = (await metric(metricsUrl, 'keelson_operator_reconcile_total')) - reconcilesBefore;
    const resyncs = windowSeconds / relistSeconds;

    // Spec changes, one after another, while resyncs keep coming.
    const latencies: number[] = [];
    let missed = 0;
    const changeUntil = performance.now() + windowSeconds * 1000;
    for (let k = 0; performance.now() < changeUntil; k += 1) {
      const name = `c${Math.floor(Math.random() * clusters)}`;
      const changedAt = performance.now();
      const patched = (await admin.custom.patchNamespacedCustomObject(
        { group, version, namespace, plural, name, body: { spec: { ha: { maximumLagOnFailover: 1_048_576 + k + 1 } } } },
        mergePatch,
      )) as { metadata: { generation: number } };
      const seen = await until(async () => {
        const current = await admin.readCluster(namespace, name);
        return ((current?.status as { observedGeneration?: number } | undefined)?.observedGeneration ?? 0) >= patched.metadata.generation;
      }, 60_000);
      if (seen === undefined) missed += 1;
      else latencies.push(performance.now() - changedAt);
      await sleep(500);
    }
    const usage = processUsage(operator.pid!);
    return {
      clusters,
      ownedMs,
      healthyMs,
      getsPerCluster: idle.get / clusters / resyncs,
      listsPerResync: idle.list / resyncs,
      listsAtVersionPerResync: idle.listAtVersion / resyncs,
      writesPerResync: idle.write / resyncs,
      haNodeCallsPerPass: reconciles > 0 ? haCalls / reconciles : 0,
      reconcilesPerResync: reconciles / resyncs,
      latencies,
      missed,
      rssMiB: usage.rssBytes / 2 ** 20,
      idleCpuMsPerSecPerCluster: (cpuAfter.cpuMs - cpuBefore.cpuMs) / windowSeconds / clusters,
    };
  } finally {
    for (const cleanup of cleanups) await cleanup();
  }
}

// Interrupted: 'exit' handlers (the oracle's) stop the servers; the operator child goes too.
const children = new Set<number>();
process.once('exit', () => children.forEach((pid) => process.kill(pid, 'SIGKILL')));
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => process.exit(130));

const rows: Row[] = [];
for (const size of sizes) {
  rows.push(await runFleet(size));
  console.error(`fleet of ${size} done`);
}
const header = `Fleet benchmark: ${serverKind === 'oracle' ? 'kube-apiserver 1.20 (oracle)' : 'API server stand-in'}, operator from ${operatorDir}, relist every ${relistSeconds} s, windows of ${windowSeconds} s, load average at the end ${loadavg()
  .map((l) => l.toFixed(1))
  .join(' / ')} on ${cpus().length} cores`;
console.log(formatTable(header, rows, timeoutMs));
