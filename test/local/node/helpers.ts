/**
 * Shared pieces of the node agent and controller tests: the test image mapping and its container,
 * a random address block, polling, waiting for a ready pod.
 */
import { randomInt } from 'node:crypto';
import { join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { createLogger } from '../../../lib/log.js';
import { serviceCidrOfPrefix } from '../../../local/apiserver/writes/service-ips.js';
import { startLocalNode, type LocalNode, type LocalNodeOptions } from '../../../local/node/run.js';
import { startTestApiServer, type TestApiServer } from '../../support/kube.js';
import { fileURLToPath } from 'node:url';
import type { ImageMapping } from '../../../local/node/images.js';

export const httpPodScript = fileURLToPath(new URL('./fixtures/http-pod.mjs', import.meta.url));

/** `registry.test/http-pod:<any tag>` runs the fixture HTTP server with node. */
export const testImages: ImageMapping[] = [{ repository: 'registry.test/http-pod', entrypoint: [process.execPath, httpPodScript] }];

export interface NodeTestbed {
  server: TestApiServer;
  node: LocalNode;
  core: k8s.CoreV1Api;
  apps: k8s.AppsV1Api;
  close(): Promise<void>;
}

/**
 * A stand-in API server plus a local node (controllers, agent, proxy) on the /24 `ipPrefix`, whose
 * Services also get addresses from that /24, and the namespace `ns` created.
 */
export async function startNodeTestbed(options: {
  dir: string;
  ns: string;
  ipPrefix: string;
  name: string;
  backoff?: LocalNodeOptions['backoff'];
  images?: ImageMapping[];
}): Promise<NodeTestbed> {
  const server = await startTestApiServer({ serviceCidr: serviceCidrOfPrefix(options.ipPrefix) });
  const node = await startLocalNode({
    kubeconfigPath: server.kubeconfigPath,
    dir: join(options.dir, 'node'),
    ipPrefix: options.ipPrefix,
    images: [...(options.images ?? []), ...testImages],
    backoff: options.backoff,
    logger: createLogger({ name: options.name, level: process.env.TEST_LOG_LEVEL ?? 'silent' }),
  });
  const core = server.kubeConfig.makeApiClient(k8s.CoreV1Api);
  await core.createNamespace({ body: { metadata: { name: options.ns } } });
  return {
    server,
    node,
    core,
    apps: server.kubeConfig.makeApiClient(k8s.AppsV1Api),
    async close() {
      await node.close();
      await server.close();
    },
  };
}

/**
 * The fixture HTTP server as a container named `web` on port `http` (8080): POD_NAME and POD_IP
 * from the downward API, readiness on /ready. `env` adds variables or replaces these by name.
 */
export function httpPodContainer(env: k8s.V1EnvVar[] = [], overrides: Partial<k8s.V1Container> = {}): k8s.V1Container {
  const base: k8s.V1EnvVar[] = [
    { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
    { name: 'POD_IP', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } },
  ];
  const names = new Set(env.map((e) => e.name));
  return {
    name: 'web',
    image: 'registry.test/http-pod:1.0',
    ports: [{ name: 'http', containerPort: 8080 }],
    env: [...base.filter((e) => !names.has(e.name)), ...env],
    readinessProbe: { httpGet: { path: '/ready', port: 'http' }, periodSeconds: 1 },
    ...overrides,
  };
}

/** A StatefulSet selecting `app: <name>` with one 1Gi `data` claim per pod. */
export function statefulSetOf(
  name: string,
  spec: { replicas: number; serviceName: string; template: k8s.V1PodTemplateSpec } & Partial<k8s.V1StatefulSetSpec>,
): k8s.V1StatefulSet {
  return {
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: { name },
    spec: {
      selector: { matchLabels: { app: name } },
      volumeClaimTemplates: [{ metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } }],
      ...spec,
    },
  };
}

export const isReady = (pod: k8s.V1Pod | undefined): boolean => pod?.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true;

/** Polls the pod until it is Ready (and `accept` agrees, e.g. a new uid); returns it. */
export async function readyPod(
  core: k8s.CoreV1Api,
  namespace: string,
  name: string,
  what: string,
  timeoutMs = 30_000,
  accept: (pod: k8s.V1Pod) => boolean = () => true,
): Promise<k8s.V1Pod> {
  return eventually(
    async () => {
      const pod = await core.readNamespacedPod({ name, namespace });
      return isReady(pod) && accept(pod) ? pod : undefined;
    },
    what,
    timeoutMs,
  );
}

/** A /24 inside 127.0.0.0/8 that other tests running at the same time are unlikely to use. */
export function randomIpPrefix(): string {
  return `127.${randomInt(100, 250)}.${randomInt(1, 250)}`;
}

export async function eventually<T>(probe: () => Promise<T | undefined> | T | undefined, what: string, timeoutMs = 20_000, everyMs = 100): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined && value !== false) return value;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${lastError ? `: ${(lastError as Error).message}` : ''}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

export async function getJson(url: string, timeoutMs = 2000): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

export async function post(url: string): Promise<number> {
  const res = await fetch(url, { method: 'POST', signal: AbortSignal.timeout(2000) });
  await res.arrayBuffer();
  return res.status;
}

export async function refused(url: string): Promise<boolean> {
  try {
    await fetch(url, { signal: AbortSignal.timeout(1000) });
    return false;
  } catch {
    return true;
  }
}
