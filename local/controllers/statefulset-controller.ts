/**
 * StatefulSet controller: for each set creates missing claims and pods, carries out the deletions
 * planStatefulSet() returns and writes the status statefulSetStatus() computes (the watch, pod
 * listing and deletion it shares with the Deployment controller, in pod-owner-controller.ts).
 */
import * as k8s from '@kubernetes/client-node';
import type { Logger } from '../../lib/log.js';
import { isConflict, mergePatch } from './kube.js';
import { canonicalJson } from './pod-template.js';
import { startPodOwnerController, type Controller } from './pod-owner-controller.js';
import { claimsFor, planStatefulSet, podFor, statefulSetStatus } from './statefulset.js';

export type { Controller } from './pod-owner-controller.js';

export async function startStatefulSetController(kc: k8s.KubeConfig, logger: Logger): Promise<Controller> {
  const apps = kc.makeApiClient(k8s.AppsV1Api);
  const core = kc.makeApiClient(k8s.CoreV1Api);
  return startPodOwnerController(kc, logger, {
    kind: 'StatefulSet',
    path: '/apis/apps/v1/statefulsets',
    read: (name, namespace) => apps.readNamespacedStatefulSet({ name, namespace }),
    listAll: () => apps.listStatefulSetForAllNamespaces(),
    plan: planStatefulSet,
    async create(set, action, { key, namespace, log }) {
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
    },
    changedStatus(set, pods) {
      const status = statefulSetStatus(set, pods);
      return canonicalJson(status) !== canonicalJson(pickStatus(set.status)) ? status : undefined;
    },
    patchStatus: (name, namespace, status) => apps.patchNamespacedStatefulSetStatus({ name, namespace, body: { status } }, mergePatch),
  });
}

/** The fields statefulSetStatus() computes, taken from the stored status for comparison. */
function pickStatus(status: k8s.V1StatefulSetStatus | undefined): Partial<k8s.V1StatefulSetStatus> {
  if (!status) return {};
  const { observedGeneration, replicas, readyReplicas, availableReplicas, currentReplicas, updatedReplicas, currentRevision, updateRevision, collisionCount } =
    status;
  return { observedGeneration, replicas, readyReplicas, availableReplicas, currentReplicas, updatedReplicas, currentRevision, updateRevision, collisionCount };
}
