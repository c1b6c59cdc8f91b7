import { randomBytes } from 'node:crypto';
import { join, resolve } from 'node:path';
import { mkdir } from 'node:fs/promises';
import { CustomObjectsApi, type KubeConfig, type V1CustomResourceDefinition } from '@kubernetes/client-node';
import { apiStatusCode } from '../../lib/kube/client.js';
import type { Logger } from '../../lib/log.js';
import { allCrds } from '../../api/crd/all-crds.js';
import { runOperator, type RunningOperator } from '../../operator/run.js';
import { startApiServer, type RunningApiServer } from '../apiserver/server.js';
import { serviceCidrOfPrefix } from '../apiserver/writes/service-ips.js';
import { startLocalNode, type LocalNode } from '../node/run.js';
import type { NetworkMode } from '../node/netns/node-mode.js';
import { ensureNodeNetwork } from '../node/netns/node-network.js';
import { nodeSubnet, serviceCidrOfSubnet } from '../node/netns/subnet.js';

/**
 * The whole single-machine stack in one process: the API server stand-in, the CRDs, the local
 * node (controllers, node agent, service proxy) and the operator. `keelson local up` and the
 * operator's end-to-end tests both start it through here.
 */
/**
 * A new CA is trusted this long before it signs. The local node rewrites Secret volumes as it
 * hears of a change (a kubelet within its sync period), and ha-node picks new files up within
 * about 10 s: three times that.
 */
export const localCaTrustPropagationMs = 30_000;

export interface LocalStackOptions {
  dir: string;
  logger: Logger;
  /** Keep API server state in DIR/state.json (local up) or in memory (tests). */
  persist?: boolean;
  /** /24 for pod and Service addresses (default 127.0.0). */
  ipPrefix?: string;
  operatorVersion: string;
  /** Serve the stand-in's /_keelson/faults hook (to the admin credentials only). */
  faultInjection?: boolean;
  /** `namespace`: pods in network namespaces, the API server on the node bridge (ADR 0354). */
  network?: NetworkMode;
  /** Private /24 of pod addresses in namespace mode (default 10.213.0). */
  podNetwork?: string;
  /** Where the admin's kubeconfig goes (default DIR/kubeconfig). */
  kubeconfigPath?: string;
  /** The operator's --ca-trust-propagation (default localCaTrustPropagationMs). */
  caTrustPropagationMs?: number;
}

const defaultIpPrefix = '127.0.0';

export interface LocalStack {
  apiServer: RunningApiServer;
  kubeconfigPath: string;
  node: LocalNode;
  operator: RunningOperator;
  close(): Promise<void>;
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
 * Creates or updates the keelson.io CRDs (DatabaseCluster, Backup). It goes through the custom-objects client, which
 * sends the body as it is: client-node's typed CRD client would drop the `x-kubernetes-*` keys
 * (its models name them x_kubernetes_*). A server without CEL gets the CRD without its rules
 * (the operator enforces them too).
 */
export async function installCrds(kubeConfig: KubeConfig, logger: Logger): Promise<void> {
  const api = kubeConfig.makeApiClient(CustomObjectsApi);
  const target = { group: 'apiextensions.k8s.io', version: 'v1', plural: 'customresourcedefinitions' };
  const apply = async (crd: V1CustomResourceDefinition) => {
    const name = crd.metadata!.name!;
    try {
      const existing = (await api.getClusterCustomObject({ ...target, name })) as V1CustomResourceDefinition;
      await api.replaceClusterCustomObject({
        ...target,
        name,
        body: { ...crd, metadata: { ...crd.metadata, resourceVersion: existing.metadata?.resourceVersion } },
      });
    } catch (err) {
      if (apiStatusCode(err) !== 404) throw err;
      await api.createClusterCustomObject({ ...target, body: crd });
    }
  };
  for (const crd of allCrds()) {
    try {
      await apply(crd);
    } catch (err) {
      if (!/CEL validation rules are not supported/.test(String((err as { body?: unknown }).body ?? err))) throw err;
      logger.warn(
        { crd: crd.metadata?.name },
        'API server has no CEL support; CRD installed without its x-kubernetes-validations (the operator still enforces them)',
      );
      await apply(withoutCel(crd) as V1CustomResourceDefinition);
    }
  }
}

export async function startLocalStack(options: LocalStackOptions): Promise<LocalStack> {
  const dir = resolve(options.dir);
  await mkdir(dir, { recursive: true });
  const { logger } = options;
  const kubeconfigPath = options.kubeconfigPath ?? join(dir, 'kubeconfig');
  // Namespace mode: the bridge first (refused outside an isolated namespace), so the API server can
  // listen on the address pods reach it at.
  const subnet = options.network === 'namespace' ? nodeSubnet(options.podNetwork) : undefined;
  if (subnet) await ensureNodeNetwork(subnet);
  const apiServer = await startApiServer({
    host: subnet?.apiAddress,
    dir: join(dir, 'apiserver'),
    kubeconfigPath,
    stateFile: options.persist ? join(dir, 'state.json') : undefined,
    // Service IPs from the node's own /24, so stacks with different prefixes never share one; in
    // namespace mode from the node namespace's private Service /24, which pods reach (ADR 0355).
    serviceCidr: subnet ? serviceCidrOfSubnet(subnet) : serviceCidrOfPrefix(options.ipPrefix ?? defaultIpPrefix),
    faultInjection: options.faultInjection ?? false,
    logger: logger.child({ component: 'apiserver' }),
  });
  const closers: Array<() => Promise<void>> = [() => apiServer.close()];
  const close = async () => {
    for (const closer of closers.splice(0).reverse()) await closer().catch((err: unknown) => logger.warn({ err }, 'stop failed'));
  };
  try {
    const { loadKubeConfig } = await import('../../lib/kube/client.js');
    await installCrds(loadKubeConfig({ kubeconfig: kubeconfigPath }), logger);
    // The node has its own identity, so a pod that falls back to the node's kubeconfig never holds the admin's.
    const nodeKubeconfig = join(dir, 'apiserver', 'node.kubeconfig');
    apiServer.writeKubeconfig(nodeKubeconfig, { token: `node-${randomBytes(16).toString('hex')}` });
    const node = await startLocalNode({
      kubeconfigPath: nodeKubeconfig,
      dir: join(dir, 'node'),
      ipPrefix: options.ipPrefix ?? defaultIpPrefix,
      network: options.network,
      podNetwork: options.podNetwork,
      logger: logger.child({ component: 'node' }),
    });
    closers.push(() => node.close());
    const operator = await runOperator({
      kubeconfig: kubeconfigPath,
      namespaces: [],
      leaderElect: true,
      leaseNamespace: 'default',
      leaseName: 'keelson-operator',
      identity: 'keelson-local',
      health: { host: '127.0.0.1', port: 0 },
      metrics: { host: '127.0.0.1', port: 0 },
      relistIntervalMs: 30_000,
      caTrustPropagationMs: options.caTrustPropagationMs ?? localCaTrustPropagationMs,
      operatorVersion: options.operatorVersion,
      logger: logger.child({ component: 'operator' }),
    });
    closers.push(() => operator.stop());
    return { apiServer, kubeconfigPath, node, operator, close };
  } catch (err) {
    await close();
    throw err;
  }
}
