import type * as k8s from '@kubernetes/client-node';
import type { Logger } from '../../lib/log.js';
import { isNotFound, mergePatch, statusCode } from '../controllers/kube.js';
import type { PodWorker } from './pod-worker.js';
import { statusDigest } from './pod-status.js';

/**
 * Coalesces status changes per pod and writes them one at a time through pods/status. Like a
 * kubelet's status manager it also compares what the API server holds with what it last wrote
 * (on every pod event and on a periodic re-sync) and writes again when another writer changed it.
 */
export class StatusWriter {
  private readonly dirty = new Map<string, PodWorker>();
  private readonly written = new Map<string, string>();
  /** statusDigest of the last status written, per pod uid. */
  private readonly writtenDigest = new Map<string, string>();
  private readonly previous = new Map<string, k8s.V1PodStatus>();
  private flushing = false;
  private timer?: NodeJS.Timeout;
  private closed = false;

  constructor(
    private readonly core: k8s.CoreV1Api,
    private readonly logger: Logger,
  ) {}

  schedule(worker: PodWorker): void {
    if (this.closed || worker.isTerminated) return;
    this.dirty.set(worker.uid, worker);
    this.timer ??= setTimeout(() => {
      this.timer = undefined;
      void this.flush();
    }, 50);
  }

  /**
   * The API server's copy of a pod's status (from a watch event or the cache at a re-sync): when it
   * no longer matches what this node wrote, the next write is not skipped. Returns whether it differed.
   */
  verify(worker: PodWorker, server: k8s.V1PodStatus | undefined): boolean {
    const mine = this.writtenDigest.get(worker.uid);
    if (mine === undefined || mine === statusDigest(server)) return false;
    this.logger.info({ pod: worker.key }, 'pod status on the API server differs from what this node reported; writing it again');
    this.written.delete(worker.uid);
    this.writtenDigest.delete(worker.uid);
    this.schedule(worker);
    return true;
  }

  forget(uid: string): void {
    this.dirty.delete(uid);
    this.written.delete(uid);
    this.writtenDigest.delete(uid);
    this.previous.delete(uid);
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.timer);
    this.dirty.clear();
  }

  private async flush(): Promise<void> {
    if (this.flushing) return;
    this.flushing = true;
    try {
      while (this.dirty.size > 0 && !this.closed) {
        const [[uid, worker]] = this.dirty;
        this.dirty.delete(uid);
        await this.write(worker);
      }
    } finally {
      this.flushing = false;
    }
  }

  private async write(worker: PodWorker): Promise<void> {
    // A worker that finished is gone from the node; its pod may already have a successor of the
    // same name (the uid in the patch guards that too, but there is nothing left to report).
    if (worker.isTerminated) return;
    const status = worker.status(this.previous.get(worker.uid) ?? worker.pod.status);
    const comparable = JSON.stringify({ ...status, conditions: status.conditions?.map((c) => ({ type: c.type, status: c.status })) });
    if (this.written.get(worker.uid) === comparable) return;
    const { name, namespace } = worker.pod.metadata ?? {};
    try {
      await this.core.patchNamespacedPodStatus(
        { name: name ?? '', namespace: namespace ?? 'default', body: { metadata: { uid: worker.uid }, status } },
        mergePatch,
      );
      this.written.set(worker.uid, comparable);
      this.writtenDigest.set(worker.uid, statusDigest(status));
      this.previous.set(worker.uid, status);
    } catch (err) {
      // Gone, or replaced by a pod of the same name (422 on the uid): retrying cannot help.
      if (isNotFound(err) || statusCode(err) === 422) return;
      this.logger.warn({ pod: worker.key, err: (err as Error).message }, 'pod status write failed, retrying');
      setTimeout(() => this.schedule(worker), 500).unref();
    }
  }
}
