import type * as k8s from '@kubernetes/client-node';
import { describeApiError } from '../../../lib/kube/client.js';
import { Informer, type ListResult } from '../../../lib/kube/informer.js';
import type { Logger } from '../../../lib/log.js';

/**
 * The namespace's Database objects, watched once this member first needs them (it leads): the
 * leader reads them from the cache instead of listing every HA cycle, and a change of one naming
 * this cluster wakes the loop, so a new Database is applied at once. Until the watch has synced,
 * or after it failed (no such kind yet, no right to watch), callers list directly; a failed start
 * is tried again after a minute.
 */
export class WatchedDatabases {
  private readonly informer: Informer<k8s.KubernetesObject>;
  private state: 'idle' | 'starting' | 'running' = 'idle';
  private failedAt = 0;

  constructor(
    kubeConfig: k8s.KubeConfig,
    path: string,
    list: (resourceVersion: string) => Promise<ListResult<k8s.KubernetesObject>>,
    private readonly cluster: string,
    private readonly onChange: () => void,
    private readonly logger: Logger,
  ) {
    this.informer = new Informer<k8s.KubernetesObject>({
      kubeConfig,
      path,
      list,
      onEvent: (_event, object, previous) => {
        if (this.mine(object) || (previous && this.mine(previous))) this.onChange();
      },
      logger,
    });
  }

  private mine(object: k8s.KubernetesObject): boolean {
    return (object as { spec?: { cluster?: unknown } }).spec?.cluster === this.cluster;
  }

  /** The cached objects once the watch runs; undefined: list directly (and start the watch). */
  cached(): k8s.KubernetesObject[] | undefined {
    if (this.state === 'running' && this.informer.hasSynced) return this.informer.list();
    if (this.state === 'idle' && Date.now() - this.failedAt > 60_000) this.start();
    return undefined;
  }

  private start(): void {
    this.state = 'starting';
    this.informer.start().then(
      () => {
        this.state = 'running';
      },
      (error: unknown) => {
        this.informer.stop();
        this.state = 'idle';
        this.failedAt = Date.now();
        this.logger.debug({ err: describeApiError(error) }, 'cannot watch the Database objects; listing them each cycle');
      },
    );
  }

  stop(): void {
    this.informer.stop();
    this.state = 'idle';
  }
}
