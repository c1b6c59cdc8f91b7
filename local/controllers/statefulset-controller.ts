/**
 * StatefulSet controller: watches StatefulSets and pods, and for each set reads the current pods
 * with a fresh LIST (never a possibly stale cache), creates missing claims, carries out the
 * actions planStatefulSet() returns and writes status through the /status subresource.
 */
import * as k8s from '@kubernetes/client-node';
import type { Logger } from '../../lib/log.js';
import { WorkQueue, controllerOf, isConflict, isNotFound, mergePatch, objectKey, splitKey, startInformer, statusCode, type RunningInformer } from './kube.js';
import { canonicalJson, selectorString } from './pod-template.js';
import { claimsFor, planStatefulSet, podFor, statefulSetStatus } from './statefulset.js';

export interface Controller {
  close(): Promise<void>;
}

export async function startStatefulSetController(kc: k8s.KubeConfig, logger: Logger): Promise<Controller> {
  const apps = kc.makeApiClient(k8s.AppsV1Api);
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const log = logger.child({ controller: 'statefulset' });

  async function reconcile(key: string): Promise<void> {
    const { namespace, name } = splitKey(key);
    let set: k8s.V1StatefulSet;
    try {
      set = await apps.readNamespacedStatefulSet({ name, namespace });
    } catch (err) {
      if (isNotFound(err)) return; // dependents go through ownerReference garbage collection
      throw err;
    }
    if (set.metadata?.deletionTimestamp) return;
    set.apiVersion ??= 'apps/v1';
    set.kind ??= 'StatefulSet';
    const listed = await core.listNamespacedPod({ namespace, labelSelector: selectorString(set.spec?.selector) });
    const pods = listed.items.filter((p) => controllerOf(p, 'StatefulSet')?.uid === set.metadata?.uid);
    for (const action of planStatefulSet(set, pods)) {
      if (action.type === 'create') {
        for (const claim of claimsFor(set, action.ordinal)) {
          try {
            await core.createNamespacedPersistentVolumeClaim({ namespace, body: claim });
          } catch (err) {
            if (!isConflict(err)) throw err;
          }
        }
        try {
          await core.createNamespacedPod({ namespace, body: podFor(set, action.ordinal) });
          log.info({ statefulset: key, ordinal: action.ordinal }, 'created pod');
        } catch (err) {
          if (!isConflict(err)) throw err; // the old pod of that name is still going away
        }
      } else {
        try {
          await core.deleteNamespacedPod({ name: action.pod.metadata?.name ?? '', namespace, body: { preconditions: { uid: action.pod.metadata?.uid } } });
          log.info({ statefulset: key, pod: action.pod.metadata?.name, reason: action.reason }, 'deleted pod');
        } catch (err) {
          if (!isNotFound(err) && !isConflict(err)) throw err;
        }
      }
    }
    const status = statefulSetStatus(set, pods);
    if (canonicalJson(status) !== canonicalJson(pickStatus(set.status))) {
      try {
        await apps.patchNamespacedStatefulSetStatus({ name, namespace, body: { status } }, mergePatch);
      } catch (err) {
        if (statusCode(err) !== 404) throw err;
      }
    }
  }

  const queue = new WorkQueue(reconcile, log);
  const sets: RunningInformer<k8s.V1StatefulSet> = await startInformer(
    kc,
    '/apis/apps/v1/statefulsets',
    () => apps.listStatefulSetForAllNamespaces(),
    { onChange: (set) => queue.add(objectKey(set)) },
    log,
  );
  const pods = await startInformer(
    kc,
    '/api/v1/pods',
    () => core.listPodForAllNamespaces(),
    {
      onChange: (pod) => {
        const owner = controllerOf(pod, 'StatefulSet');
        if (owner) queue.add(`${pod.metadata?.namespace}/${owner.name}`);
      },
    },
    log,
  );
  queue.startResync(() => sets.list().map(objectKey), 10_000);
  return {
    async close() {
      queue.stop();
      await Promise.all([sets.stop(), pods.stop()]);
      await queue.idle();
    },
  };
}

/** The fields statefulSetStatus() computes, taken from the stored status for comparison. */
function pickStatus(status: k8s.V1StatefulSetStatus | undefined): Partial<k8s.V1StatefulSetStatus> {
  if (!status) return {};
  const { observedGeneration, replicas, readyReplicas, availableReplicas, currentReplicas, updatedReplicas, currentRevision, updateRevision, collisionCount } =
    status;
  return { observedGeneration, replicas, readyReplicas, availableReplicas, currentReplicas, updatedReplicas, currentRevision, updateRevision, collisionCount };
}
