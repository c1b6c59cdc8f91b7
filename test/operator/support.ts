import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { allCrds } from '../../api/crd/all-crds.js';
import { apiVersion, kind } from '../../api/crd/types.js';
import { promisify } from 'node:util';
import { DiscoveryV1Api, type V1EndpointSlice, type V1Pod } from '@kubernetes/client-node';
import { apiStatusCode } from '../../lib/kube/client.js';
import { Ports } from '../../lib/ports.js';
import type { OperatorKubeApi } from '../../operator/kube-api.js';
import { commonLabels, names, podSelector } from '../../api/naming.js';

const run = promisify(execFile);

/** Runs the real kubectl against a kubeconfig (cache dir per call so tests never share state). */
export async function kubectl(kubeconfig: string, cacheDir: string, ...args: string[]): Promise<string> {
  const { stdout } = await run('kubectl', ['--kubeconfig', kubeconfig, '--cache-dir', cacheDir, ...args], { timeout: 30_000 });
  return stdout;
}

/** kubectl apply of one DatabaseCluster: its stdout, or the refusal kubectl printed. */
export async function applyCluster(
  kubeconfig: string,
  dir: string,
  namespace: string,
  name: string,
  spec: Record<string, unknown>,
): Promise<{ ok: boolean; output: string }> {
  const file = join(dir, `cluster-${Math.random().toString(36).slice(2)}.yaml`);
  writeFileSync(file, stringify({ apiVersion, kind, metadata: { name, namespace }, spec }));
  try {
    return { ok: true, output: await kubectl(kubeconfig, dir, 'apply', '-f', file) };
  } catch (err) {
    return { ok: false, output: String((err as { stderr?: string }).stderr ?? err) };
  }
}

/** Polls until `check` returns a value (not undefined/false) or the budget runs out. */
export async function eventually<T>(what: string, check: () => Promise<T | undefined | false>, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined && value !== false) return value;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${last ? `: ${String(last)}` : ''}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * Plays kubelet and the StatefulSet controller for one pod (the stand-in stores pods but runs no
 * controller in these tests): creates it with the template's labels, then reports it Ready. Its
 * address is one nothing listens on, so the operator's ha-node calls cannot reach another test's.
 */
export async function createInstancePod(
  api: OperatorKubeApi,
  namespace: string,
  cluster: string,
  ordinal: number,
  role: 'primary' | 'replica',
  revision = 'rev1',
  publishRw = true,
): Promise<void> {
  const name = `${cluster}-${ordinal}`;
  const pod: V1Pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace,
      labels: { ...commonLabels(cluster, 'database'), ...podSelector(cluster), 'keelson.io/role': role, 'controller-revision-hash': revision },
    },
    spec: { containers: [{ name: 'postgres', image: 'test' }] },
  };
  const created = await api.core.createNamespacedPod({ namespace, body: pod });
  const podIP = '127.255.255.254';
  created.status = { phase: 'Running', podIP, conditions: [{ type: 'Ready', status: 'True' }] };
  await api.core.replaceNamespacedPodStatus({ namespace, name, body: created });
  // As the endpoints controller would: `<cluster>-rw` routes to the pod labelled primary (Ready waits for it).
  if (role === 'primary' && publishRw) await publishEndpoint(api, namespace, names(cluster).rwService, podIP);
}

/** An EndpointSlice for `service` listing one ready address, as the endpoints controller writes it. */
export async function publishEndpoint(api: OperatorKubeApi, namespace: string, service: string, ip: string): Promise<void> {
  const discovery = api.kubeConfig.makeApiClient(DiscoveryV1Api);
  const body: V1EndpointSlice = {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: { name: `${service}-test`, namespace, labels: { 'kubernetes.io/service-name': service } },
    addressType: 'IPv4',
    endpoints: [{ addresses: [ip], conditions: { ready: true } }],
    ports: [{ name: 'postgres', port: Ports.postgres, protocol: 'TCP' }],
  };
  await discovery.createNamespacedEndpointSlice({ namespace, body }).catch((error: unknown) => {
    if (apiStatusCode(error) !== 409) throw error; // already published: every test pod has the same address
  });
}

function withoutCel(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(withoutCel);
  if (typeof node !== 'object' || node === null) return node;
  return Object.fromEntries(
    Object.entries(node)
      .filter(([key]) => key !== 'x-kubernetes-validations')
      .map(([key, value]) => [key, withoutCel(value)]),
  );
}

/**
 * `kubectl apply -f crds/`. While the stand-in refuses CEL rules ("not supported by this server
 * yet") the same CRD minus its CEL rules is applied instead and false is returned, so callers
 * check the operator-side validation in place of the API server's.
 */
export async function applyCrds(kubeconfig: string, cacheDir: string): Promise<boolean> {
  try {
    await kubectl(kubeconfig, cacheDir, 'apply', '-f', 'crds/');
    return true;
  } catch (err) {
    if (!/CEL validation rules are not supported/.test(String((err as { stderr?: string }).stderr))) throw err;
    const file = join(cacheDir, 'crd-without-cel.yaml');
    writeFileSync(
      file,
      allCrds()
        .map((crd) => stringify(withoutCel(crd), { version: '1.1' }))
        .join('---\n'),
    );
    await kubectl(kubeconfig, cacheDir, 'apply', '-f', file);
    return false;
  }
}

/** Sum of a Prometheus counter's samples (optionally only those whose labels start with `labels`). */
export async function metricValue(metricsUrl: string, name: string, labels = ''): Promise<number> {
  const text = await (await fetch(`${metricsUrl}/metrics`)).text();
  let total = 0;
  for (const line of text.split('\n')) {
    if (line.startsWith(`${name}{${labels}`) || line.startsWith(`${name} `)) total += Number(line.split(' ').pop());
  }
  return total;
}

/**
 * Waits for a quiet window (no API writes for `quietMs`), then for `passes` more reconciles, and
 * returns how many writes those passes made: an idle cluster must cost zero.
 */
export async function writesDuringIdlePasses(
  metricsUrl: string,
  options: { quietMs: number; passes?: number; timeoutMs: number },
): Promise<{ before: number; writes: number; which: string[] }> {
  const writes = () => metricValue(metricsUrl, 'keelson_operator_api_writes_total');
  const reconciles = () => metricValue(metricsUrl, 'keelson_operator_reconcile_total');
  await eventually(
    'a quiet window',
    async () => {
      const before = await writes();
      await new Promise((r) => setTimeout(r, options.quietMs));
      return (await writes()) === before;
    },
    options.timeoutMs,
  );
  const before = await writes();
  const byKindBefore = await writesByKindAndVerb(metricsUrl);
  const reconcilesBefore = await reconciles();
  await eventually('more reconciles', async () => (await reconciles()) >= reconcilesBefore + (options.passes ?? 3), options.timeoutMs);
  const byKindAfter = await writesByKindAndVerb(metricsUrl);
  const which = [...byKindAfter]
    .filter(([key, value]) => value !== (byKindBefore.get(key) ?? 0))
    .map(([key, value]) => `${key} +${value - (byKindBefore.get(key) ?? 0)}`);
  return { before, writes: (await writes()) - before, which };
}

/** The operator's write counter split by its kind and verb labels, so a failing idle check names the writes. */
async function writesByKindAndVerb(metricsUrl: string): Promise<Map<string, number>> {
  const text = await (await fetch(`${metricsUrl}/metrics`)).text();
  const counts = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (!line.startsWith('keelson_operator_api_writes_total{')) continue;
    counts.set(line.slice(line.indexOf('{'), line.indexOf('}') + 1), Number(line.split(' ').pop()));
  }
  return counts;
}
