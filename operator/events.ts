import type { CoreV1Api } from '@kubernetes/client-node';
import { describeApiError } from '../lib/kube/client.js';
import type { Logger } from '../lib/log.js';
import { apiVersion, kind } from './api/types.js';

export interface EventTarget {
  name: string;
  namespace: string;
  uid: string;
}

/**
 * Records Kubernetes Events on a DatabaseCluster (kubectl describe shows them). Events are for
 * notable changes only, never for routine resyncs; a failure to record one is logged, not fatal.
 */
export class EventRecorder {
  constructor(private readonly core: CoreV1Api, private readonly logger: Logger, private readonly onWrite?: () => void) {}

  async record(target: EventTarget, type: 'Normal' | 'Warning', reason: string, message: string): Promise<void> {
    const now = new Date();
    try {
      this.onWrite?.();
      await this.core.createNamespacedEvent({
        namespace: target.namespace,
        body: {
          metadata: { generateName: `${target.name}.`, namespace: target.namespace },
          involvedObject: { apiVersion, kind, name: target.name, namespace: target.namespace, uid: target.uid },
          type,
          reason,
          message: message.slice(0, 1024),
          source: { component: 'keelson-operator' },
          reportingComponent: 'keelson-operator',
          firstTimestamp: now,
          lastTimestamp: now,
          count: 1,
        },
      });
    } catch (err) {
      this.logger.warn({ err: describeApiError(err), reason }, 'could not record event');
    }
  }
}
