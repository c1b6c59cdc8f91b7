import * as k8s from '@kubernetes/client-node';
import { Informer } from '../../../lib/kube/informer.js';
import type { Logger } from '../../../lib/log.js';
import { describeApiError, withRequestTimeout } from '../../../lib/kube/client.js';
import { SharedAgents } from '../../../lib/kube/keep-alive.js';
import { Labels } from '../../../api/naming.js';

/**
 * A cache of the cluster's pods (label keelson.io/cluster=<scope>) so the HA loop can read what
 * the kubelet reports about the leader's pod without a request, and wakes when a pod changes.
 * The pod status is the kubelet's word about the container runtime, an independent source from
 * the network probes. A failed start (no RBAC, API down) is retried; until then the cache is
 * empty, which only means "unknown" (no early takeover).
 */
export class ClusterPods {
  private readonly informer: Informer<k8s.V1Pod>;
  private readonly agents = new SharedAgents();
  private readonly listeners: ((podName: string) => void)[] = [];
  private retry: NodeJS.Timeout | undefined;
  private retryMs = 5000;
  private stopped = false;

  constructor(
    kubeConfig: k8s.KubeConfig,
    private readonly namespace: string,
    scope: string,
    private readonly logger: Logger,
  ) {
    const core = kubeConfig.makeApiClient(k8s.CoreV1Api);
    const labelSelector = `${Labels.cluster}=${scope}`;
    this.informer = new Informer<k8s.V1Pod>({
      kubeConfig,
      path: `/api/v1/namespaces/${namespace}/pods`,
      labelSelector,
      list: async (resourceVersion) => {
        // A list that hangs (API server frozen) must fail so the start is retried.
        const list = await core.listNamespacedPod(
          { namespace, labelSelector, ...(resourceVersion ? { resourceVersion } : {}) },
          withRequestTimeout(10_000, this.agents.middleware()),
        );
        return { items: list.items, resourceVersion: list.metadata?.resourceVersion ?? '' };
      },
      // The watch delivers every pod change; the relist (the informer's default 5 min) is only a safety net.
      onEvent: (_event, pod) => this.changed(pod),
      logger,
    });
  }

  onChange(listener: (podName: string) => void): void {
    this.listeners.push(listener);
  }

  pod(name: string): k8s.V1Pod | undefined {
    return this.informer.get(`${this.namespace}/${name}`);
  }

  /** Every cached pod of the cluster (empty until the first list succeeded). */
  all(): k8s.V1Pod[] {
    return this.informer.list();
  }

  start(): void {
    this.stopped = false;
    this.informer.start().then(
      () => {
        if (this.retryMs > 5000) this.logger.info('watching the cluster pods again; early takeover is on');
        this.retryMs = 5000;
      },
      (error: unknown) => {
        this.informer.stop();
        if (this.stopped) return;
        // Warn on the first failure only; retries back off to 5 min (a missing RBAC rule stays missing).
        const log = this.retryMs === 5000 ? this.logger.warn.bind(this.logger) : this.logger.debug.bind(this.logger);
        log({ err: describeApiError(error), retryMs: this.retryMs }, 'cannot watch the cluster pods; early takeover is off until it can');
        this.retry = setTimeout(() => this.start(), this.retryMs);
        this.retry.unref();
        this.retryMs = Math.min(this.retryMs * 2, 300_000);
      },
    );
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.retry);
    this.informer.stop();
    this.agents.destroy();
  }

  /** Addresses of the cluster's pods of one component (label keelson.io/component) that may be serving. */
  addressesOf(component: string): string[] {
    return this.informer
      .list()
      .filter(
        (pod) =>
          pod.metadata?.labels?.[Labels.component] === component && pod.status?.podIP && pod.status.phase !== 'Succeeded' && pod.status.phase !== 'Failed',
      )
      .map((pod) => pod.status!.podIP!)
      .sort();
  }

  private changed(pod: k8s.V1Pod): void {
    const name = pod.metadata?.name;
    if (name) for (const listener of this.listeners) listener(name);
  }
}
