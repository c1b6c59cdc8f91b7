import type * as k8s from '@kubernetes/client-node';
import type { Logger } from '../../lib/log.js';
import { kubeTime } from './time.js';

/** Best-effort core/v1 Events, with repeats of the same message within 10 s dropped. */
export class EventRecorder {
  private readonly recent = new Map<string, number>();

  constructor(
    private readonly core: k8s.CoreV1Api,
    private readonly nodeName: string,
    private readonly logger: Logger,
  ) {}

  record(pod: k8s.V1Pod, type: 'Normal' | 'Warning', reason: string, message: string, component = 'kubelet'): void {
    const key = `${pod.metadata?.uid}|${reason}|${message}`;
    const now = Date.now();
    if ((this.recent.get(key) ?? 0) > now - 10_000) return;
    this.recent.set(key, now);
    if (this.recent.size > 5000) this.recent.clear();
    const namespace = pod.metadata?.namespace ?? 'default';
    const at = kubeTime() as unknown as Date;
    this.core
      .createNamespacedEvent({
        namespace,
        body: {
          metadata: { generateName: `${pod.metadata?.name ?? 'pod'}.`, namespace },
          involvedObject: { apiVersion: 'v1', kind: 'Pod', name: pod.metadata?.name, namespace, uid: pod.metadata?.uid },
          type,
          reason,
          message,
          source: component === 'kubelet' ? { component, host: this.nodeName } : { component },
          reportingComponent: component,
          reportingInstance: this.nodeName,
          firstTimestamp: at,
          lastTimestamp: at,
          count: 1,
        },
      })
      .catch((err: unknown) => this.logger.debug({ reason, err: (err as Error).message }, 'event not recorded'));
  }
}
