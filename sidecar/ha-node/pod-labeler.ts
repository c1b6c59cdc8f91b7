import * as k8s from '@kubernetes/client-node';
import type { Logger } from '../../lib/log.js';
import { describeApiError, isNotFound, withRequestTimeout } from '../../lib/kube/client.js';

export const RoleLabel = 'keelson.io/role';

/**
 * Keeps this pod's `keelson.io/role` label equal to the member's role so the -rw and -ro Services
 * route correctly. Patches only on change; a missing pod (ha-node outside Kubernetes) is logged once.
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
  ) {
    this.api = kubeConfig.makeApiClient(k8s.CoreV1Api);
  }

  async set(role: 'primary' | 'replica'): Promise<void> {
    if (this.applied === role) return;
    // Merge patch, bounded by the same request timeout as the lease calls.
    const options = k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch, withRequestTimeout(this.timeoutMs()));
    try {
      await this.api.patchNamespacedPod({ name: this.podName, namespace: this.namespace, body: { metadata: { labels: { [RoleLabel]: role } } } }, options);
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

  /** Forget what was applied so the next set() patches again (after an API outage, say). */
  reset(): void {
    this.applied = undefined;
  }
}
