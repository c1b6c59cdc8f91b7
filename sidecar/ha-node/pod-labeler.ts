import * as k8s from '@kubernetes/client-node';
import type { Logger } from '../../lib/log.js';
import { apiStatusCode, describeApiError, isNotFound, withRequestTimeout } from '../../lib/kube/client.js';

export const RoleLabel = 'keelson.io/role';

/** What the labeler reads from the cluster's pods (the ClusterPods cache). */
export interface PodCache {
  pod(name: string): k8s.V1Pod | undefined;
  all(): k8s.V1Pod[];
}

/**
 * Pods other than `self` that still carry the primary label: a former primary cut off from the
 * API server demotes itself but cannot take its own label off, so the leader does (ADR 0406).
 * Each comes with the resourceVersion the patch is made against.
 */
export function stalePrimaryLabels(pods: k8s.V1Pod[], self: string): Array<{ name: string; resourceVersion?: string }> {
  return pods
    .filter((pod) => pod.metadata?.name !== self && pod.metadata?.labels?.[RoleLabel] === 'primary' && !pod.metadata?.deletionTimestamp)
    .map((pod) => ({ name: pod.metadata!.name!, resourceVersion: pod.metadata?.resourceVersion }));
}

/**
 * Keeps this pod's `keelson.io/role` label equal to the member's role so the -rw and -ro Services
 * route correctly, and, on the leader, takes the primary label off every other pod. Patches only
 * on change; a missing pod (ha-node outside Kubernetes) is logged once.
 */
export class PodLabeler {
  private readonly api: k8s.CoreV1Api;
  private applied: string | undefined;
  private warnedMissing = false;

  constructor(
    kubeConfig: k8s.KubeConfig,
    private readonly namespace: string,
    private readonly podName: string,
    private readonly logger: Logger,
    private readonly timeoutMs: () => number,
    private readonly pods?: PodCache,
  ) {
    this.api = kubeConfig.makeApiClient(k8s.CoreV1Api);
  }

  async set(role: 'primary' | 'replica'): Promise<void> {
    // Someone else may have changed the label (the leader relabels a former primary): the cache says so.
    const seen = this.pods?.pod(this.podName)?.metadata?.labels?.[RoleLabel];
    if (this.applied === role && (seen === undefined || seen === role)) return;
    try {
      await this.patch(this.podName, role);
      this.applied = role;
      this.logger.info({ role }, 'pod role label set');
    } catch (error) {
      if (isNotFound(error)) {
        if (!this.warnedMissing) this.logger.warn({ pod: this.podName }, 'pod not found; role label not set');
        this.warnedMissing = true;
        return;
      }
      this.logger.warn({ err: describeApiError(error) }, 'could not set the pod role label');
    }
  }

  /**
   * Leader only: labels every other pod still marked primary as a replica. Each patch names the
   * resourceVersion seen, so a pod that changed meanwhile (a later leader labelled it) is left alone.
   */
  async clearOtherPrimaries(): Promise<void> {
    const stale = stalePrimaryLabels(this.pods?.all() ?? [], this.podName);
    await Promise.all(
      stale.map(async ({ name, resourceVersion }) => {
        try {
          await this.patch(name, 'replica', resourceVersion);
          this.logger.info({ pod: name }, 'took the primary label off a former primary');
        } catch (error) {
          if (isNotFound(error) || apiStatusCode(error) === 409) return;
          this.logger.warn({ pod: name, err: describeApiError(error) }, 'could not take the primary label off a former primary');
        }
      }),
    );
  }

  /** Forget what was applied so the next set() patches again (after an API outage, say). */
  reset(): void {
    this.applied = undefined;
  }

  private async patch(name: string, role: 'primary' | 'replica', resourceVersion?: string): Promise<void> {
    // Merge patch, bounded by the same request timeout as the lease calls.
    const options = k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch, withRequestTimeout(this.timeoutMs()));
    const metadata = { labels: { [RoleLabel]: role }, ...(resourceVersion ? { resourceVersion } : {}) };
    await this.api.patchNamespacedPod({ name, namespace: this.namespace, body: { metadata } }, options);
  }
}
