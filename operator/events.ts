import { PatchStrategy, setHeaderOptions, type CoreV1Api } from '@kubernetes/client-node';
import { apiStatusCode, describeApiError } from '../lib/kube/client.js';
import type { Logger } from '../lib/log.js';
import { apiVersion, kind } from '../api/crd/types.js';

export interface EventTarget {
  name: string;
  namespace: string;
  uid: string;
  /** The object's kind when it is not a DatabaseCluster (a Database). */
  kind?: string;
}

/** The Event last written for one (object, type, reason, message) and how often it happened. */
interface Seen {
  name: string;
  count: number;
  firstTimestamp: Date;
}

const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

/** How many distinct events are remembered for aggregation (oldest forgotten first). */
const rememberedEvents = 512;

/**
 * Records Kubernetes Events on a DatabaseCluster (kubectl describe shows them). Events are for
 * notable changes only, never for routine resyncs; a failure to record one is logged, not fatal.
 * A repeat of the same event (say a refusal seen on every pass) updates count and lastTimestamp
 * of the Event already written, as client-go's recorder does, instead of adding one per pass.
 */
export class EventRecorder {
  private readonly seen = new Map<string, Seen>();

  constructor(
    private readonly core: CoreV1Api,
    private readonly logger: Logger,
    private readonly onWrite?: (verb: 'create' | 'patch') => void,
  ) {}

  async record(target: EventTarget, type: 'Normal' | 'Warning', reason: string, message: string): Promise<void> {
    const text = message.slice(0, 1024);
    const key = JSON.stringify([target.namespace, target.uid, type, reason, text]);
    const now = new Date();
    try {
      const previous = this.seen.get(key);
      if (previous && (await this.bump(target.namespace, previous, now))) {
        this.remember(key, previous);
        return;
      }
      this.onWrite?.('create');
      const created = await this.core.createNamespacedEvent({
        namespace: target.namespace,
        body: {
          metadata: { generateName: `${target.name}.`, namespace: target.namespace },
          involvedObject: { apiVersion, kind: target.kind ?? kind, name: target.name, namespace: target.namespace, uid: target.uid },
          type,
          reason,
          message: text,
          source: { component: 'keelson-operator' },
          reportingComponent: 'keelson-operator',
          firstTimestamp: now,
          lastTimestamp: now,
          count: 1,
        },
      });
      if (created.metadata?.name) this.remember(key, { name: created.metadata.name, count: 1, firstTimestamp: now });
    } catch (err) {
      this.logger.warn({ err: describeApiError(err), reason }, 'could not record event');
    }
  }

  /** Counts one more occurrence on the stored Event; false when it is gone (expired), so a new one is made. */
  private async bump(namespace: string, seen: Seen, now: Date): Promise<boolean> {
    this.onWrite?.('patch');
    try {
      await this.core.patchNamespacedEvent({ namespace, name: seen.name, body: { count: seen.count + 1, lastTimestamp: now.toISOString() } }, mergePatch);
      seen.count += 1;
      return true;
    } catch (err) {
      if (apiStatusCode(err) === 404) return false;
      throw err;
    }
  }

  private remember(key: string, seen: Seen): void {
    this.seen.delete(key);
    this.seen.set(key, seen);
    if (this.seen.size > rememberedEvents) this.seen.delete(this.seen.keys().next().value!);
  }
}
