/**
 * The node agent (our kubelet): registers a Node, binds unscheduled pods to itself, runs the pods
 * bound to it through PodWorkers, writes pod status through the /status subresource, and carries
 * out graceful deletion (terminate with the grace period, then delete with grace 0 and a uid
 * precondition, which is how a real kubelet finishes a pod the API server marked for deletion).
 */
import * as k8s from '@kubernetes/client-node';
import type { Logger } from '../../lib/log.js';
import { isConflict, isNotFound, mergePatch, startInformer, statusCode, type RunningInformer } from '../controllers/kube.js';
import type { AddressPool } from './addresses.js';
import type { BackoffPolicy } from './backoff.js';
import type { ImageMapping } from './images.js';
import type { PodNetworkProvider } from './netns/pod-network.js';
import { PodCredentials } from './pod-kubeconfig.js';
import { PodWorker, type LocalUser } from './pod-worker.js';
import { apiEnvSources, watchProjectedSources } from './sources.js';
import { ClaimFilesystems, type VolumeMode } from './claim-filesystems.js';
import { bindClaim, startClaimResizer } from './claim-capacity.js';
import { EventRecorder } from './events.js';
import { StatusWriter } from './status-writer.js';
import { registerNode, renewNodeLease } from './node-heartbeat.js';

export interface NodeAgentOptions {
  kubeConfig: k8s.KubeConfig;
  nodeName: string;
  dir: string;
  addresses: AddressPool;
  images: ImageMapping[];
  baseEnv: Record<string, string>;
  nonRootUser?: LocalUser;
  backoff: BackoffPolicy;
  /** Namespace mode: pods in their own network namespaces. */
  network?: PodNetworkProvider;
  markerPrefix: string;
  logger: Logger;
  hostIP?: string;
  /** How often the Node's Ready condition and its kube-node-lease Lease are renewed (a kubelet's 10 s). */
  heartbeatMs?: number;
  /** How often every pod's status on the API server is compared with what the node reported (a kubelet's 10 s). */
  statusResyncMs?: number;
  /** How often workers are checked against the pods the API still has. */
  sweepMs?: number;
}

export interface NodeAgent {
  readonly workers: ReadonlyMap<string, PodWorker>;
  /** `filesystem`: each claim is a volume of its claimed size; `directory`: a folder without one. */
  readonly volumeMode: VolumeMode;
  /** Stops every pod: SIGTERM with at most `graceMs` before SIGKILL, or SIGKILL at once when omitted. */
  close(graceMs?: number): Promise<void>;
}

const terminalPhases = new Set(['Succeeded', 'Failed']);

export async function startNodeAgent(options: NodeAgentOptions): Promise<NodeAgent> {
  const { kubeConfig, nodeName, logger } = options;
  const hostIP = options.hostIP ?? '127.0.0.1';
  const core = kubeConfig.makeApiClient(k8s.CoreV1Api);
  const sources = apiEnvSources(core);
  const credentials = new PodCredentials(core, kubeConfig, options.nonRootUser, logger);
  const workers = new Map<string, PodWorker>();
  const terminating = new Map<string, Promise<void>>();
  const statusWriter = new StatusWriter(core, logger);
  const events = new EventRecorder(core, nodeName, logger);
  let bindingSupported = true;
  let closed = false;
  const filesystems = await ClaimFilesystems.open(options.dir, logger);

  const coordination = kubeConfig.makeApiClient(k8s.CoordinationV1Api);
  const beat = async (): Promise<void> => {
    const uid = await registerNode(core, nodeName, hostIP, logger);
    await renewNodeLease(coordination, nodeName, uid, logger);
  };
  await beat();
  const heartbeat = setInterval(() => void beat(), options.heartbeatMs ?? 10_000);
  heartbeat.unref();

  async function bind(pod: k8s.V1Pod): Promise<void> {
    const name = pod.metadata?.name ?? '';
    const namespace = pod.metadata?.namespace ?? 'default';
    if (bindingSupported) {
      try {
        await core.createNamespacedPodBinding({ name, namespace, body: { metadata: { name }, target: { apiVersion: 'v1', kind: 'Node', name: nodeName } } });
        events.record(pod, 'Normal', 'Scheduled', `Successfully assigned ${namespace}/${name} to ${nodeName}`, 'default-scheduler');
        return;
      } catch (err) {
        const code = statusCode(err);
        if (code !== 404 && code !== 405) throw err;
        // The server has no binding subresource: fall back to setting spec.nodeName.
        bindingSupported = false;
        logger.info('pods/binding is not served, scheduling by patching spec.nodeName');
      }
    }
    await core.patchNamespacedPod({ name, namespace, body: { spec: { nodeName } } }, mergePatch);
    events.record(pod, 'Normal', 'Scheduled', `Successfully assigned ${namespace}/${name} to ${nodeName}`, 'default-scheduler');
  }

  async function finishDeletion(worker: PodWorker, graceMs: number, deleteObject: boolean): Promise<void> {
    const uid = worker.uid;
    if (terminating.has(uid)) return terminating.get(uid);
    const done = (async () => {
      statusWriter.forget(uid);
      await worker.terminate(graceMs);
      workers.delete(uid);
      if (!deleteObject || closed) return;
      const { name, namespace } = worker.pod.metadata ?? {};
      try {
        await core.deleteNamespacedPod({
          name: name ?? '',
          namespace: namespace ?? 'default',
          gracePeriodSeconds: 0,
          body: { gracePeriodSeconds: 0, preconditions: { uid } },
        });
      } catch (err) {
        if (!isNotFound(err) && !isConflict(err)) logger.warn({ pod: worker.key, err: (err as Error).message }, 'final pod delete failed');
      }
    })();
    terminating.set(uid, done);
    try {
      await done;
    } finally {
      terminating.delete(uid);
    }
  }

  function handle(pod: k8s.V1Pod, type: 'add' | 'update' | 'delete'): void {
    if (closed) return;
    const uid = pod.metadata?.uid ?? '';
    const worker = workers.get(uid);
    if (type === 'delete') {
      // Deleted without a graceful phase (or by someone else): still honour the pod's grace period.
      if (worker) void finishDeletion(worker, worker.graceMs(), false);
      return;
    }
    const assigned = pod.spec?.nodeName;
    if (!assigned) {
      if (pod.spec?.schedulerName && pod.spec.schedulerName !== 'default-scheduler') return;
      if (pod.metadata?.deletionTimestamp) return;
      bind(pod).catch((err: unknown) => logger.warn({ pod: pod.metadata?.name, err: (err as Error).message }, 'binding failed'));
      return;
    }
    if (assigned !== nodeName) return;
    if (pod.metadata?.deletionTimestamp) {
      const graceSeconds = pod.metadata.deletionGracePeriodSeconds ?? pod.spec?.terminationGracePeriodSeconds ?? 30;
      if (worker) void finishDeletion(worker, graceSeconds * 1000, true);
      else if (!terminating.has(uid)) {
        core
          .deleteNamespacedPod({
            name: pod.metadata.name ?? '',
            namespace: pod.metadata.namespace ?? 'default',
            gracePeriodSeconds: 0,
            body: { gracePeriodSeconds: 0, preconditions: { uid } },
          })
          .catch(() => undefined);
      }
      return;
    }
    if (worker) {
      worker.pod = pod;
      statusWriter.verify(worker, pod.status);
      return;
    }
    if (terminalPhases.has(pod.status?.phase ?? '')) return;
    for (const other of workers.values()) {
      // Same name, other uid: the old pod was deleted while we were not watching.
      if (other.key === `${pod.metadata?.namespace}/${pod.metadata?.name}`) void finishDeletion(other, other.graceMs(), false);
    }
    const created = new PodWorker(pod, {
      nodeDir: options.dir,
      nodeName,
      hostIP,
      addresses: options.addresses,
      images: options.images,
      sources,
      baseEnv: options.baseEnv,
      nonRootUser: options.nonRootUser,
      backoff: options.backoff,
      network: options.network,
      markerPrefix: options.markerPrefix,
      logger,
      ensureClaim: (namespace, claim) => bindClaim(core, filesystems, namespace, claim),
      kubeconfigFor: (p, dir) => credentials.kubeconfigFor(p, dir),
      onStatus: (w) => statusWriter.schedule(w),
      onEvent: (p, eventType, reason, message) => events.record(p, eventType, reason, message),
    });
    workers.set(uid, created);
    logger.info({ pod: created.key }, 'starting pod');
    created.start();
  }

  // Secret and ConfigMap volumes follow their objects while pods run, as on a kubelet.
  const projectedWatches = await watchProjectedSources(kubeConfig, core, logger, (kind, object, data) => {
    if (closed) return;
    const { namespace, name } = object.metadata ?? {};
    for (const worker of workers.values()) {
      if (worker.pod.metadata?.namespace === namespace && !terminating.has(worker.uid)) void worker.refreshProjected(kind, name ?? '', data);
    }
  });

  const mountsClaim = (namespace: string, claim: string): boolean =>
    [...workers.values()].some(
      (w) => w.pod.metadata?.namespace === namespace && (w.pod.spec?.volumes ?? []).some((v) => v.persistentVolumeClaim?.claimName === claim),
    );
  const resizer = await startClaimResizer(kubeConfig, core, filesystems, mountsClaim, logger);

  const informer: RunningInformer<k8s.V1Pod> = await startInformer(
    kubeConfig,
    '/api/v1/pods',
    () => core.listPodForAllNamespaces(),
    { onChange: handle },
    logger,
  );

  // A relist after a dropped watch reports a pod deleted and recreated under the same name as an
  // update of the new uid, never as a delete of the old one: stop workers whose uid is gone.
  const sweep = setInterval(() => {
    if (closed) return;
    const live = new Set(informer.list().map((p) => p.metadata?.uid));
    for (const worker of workers.values()) {
      if (!live.has(worker.uid) && !terminating.has(worker.uid)) {
        logger.info({ pod: worker.key, uid: worker.uid }, 'pod is gone from the API, stopping it');
        void finishDeletion(worker, worker.graceMs(), false);
      }
    }
  }, options.sweepMs ?? 5000);
  sweep.unref();

  // Events can be missed (a watch that ended, a relist that merged them): compare periodically too.
  const resync = setInterval(() => {
    if (closed) return;
    const cached = new Map(informer.list().map((p) => [p.metadata?.uid, p]));
    for (const worker of workers.values()) {
      const pod = cached.get(worker.uid);
      if (pod && !terminating.has(worker.uid)) statusWriter.verify(worker, pod.status);
    }
  }, options.statusResyncMs ?? 10_000);
  resync.unref();

  return {
    workers,
    volumeMode: filesystems.mode,
    async close(graceMs?: number) {
      closed = true;
      clearInterval(heartbeat);
      clearInterval(sweep);
      clearInterval(resync);
      // Every step runs even when one fails (a pod folder that cannot be removed, a watch that
      // ends badly): the claim volumes are saved and unmounted last whatever happened before.
      const failures: unknown[] = [];
      const step = async (work: () => Promise<unknown>): Promise<void> => {
        await work().catch((error: unknown) => failures.push(error));
      };
      await step(() => informer.stop());
      await step(() => Promise.all(projectedWatches.map((w) => w.stop())));
      statusWriter.close();
      await step(() =>
        Promise.allSettled([...workers.values()].map((w) => (graceMs === undefined ? w.kill() : w.terminate(Math.min(graceMs, w.graceMs()))))).then(
          (outcomes) => outcomes.forEach((o) => o.status === 'rejected' && failures.push(o.reason)),
        ),
      );
      await step(() => Promise.allSettled([...terminating.values()]));
      workers.clear();
      await step(() => resizer.stop());
      await step(() => filesystems.close());
      for (const error of failures) logger.warn({ err: (error as Error)?.message ?? String(error) }, 'node shutdown step failed');
      if (failures.length > 0) throw new Error(`node shutdown: ${failures.length} step(s) failed: ${(failures[0] as Error)?.message ?? String(failures[0])}`);
    },
  };
}
