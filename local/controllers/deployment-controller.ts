/**
 * Deployment controller: pods owned directly by the Deployment (no ReplicaSets, see ADR 0350). The
 * watch, pod listing and deletion it shares with the StatefulSet controller, in pod-owner-controller.ts.
 */
import * as k8s from '@kubernetes/client-node';
import type { Logger } from '../../lib/log.js';
import { mergePatch } from './kube.js';
import { deploymentPod, deploymentStatus, planDeployment } from './deployment.js';
import { startPodOwnerController, type Controller } from './pod-owner-controller.js';

function comparable(status: k8s.V1DeploymentStatus | undefined): string {
  if (!status) return '';
  const { observedGeneration, replicas, updatedReplicas, readyReplicas, availableReplicas, unavailableReplicas, conditions } = status;
  return JSON.stringify({
    observedGeneration,
    replicas,
    updatedReplicas,
    readyReplicas,
    availableReplicas,
    unavailableReplicas,
    conditions: (conditions ?? []).map((c) => [c.type, c.status, c.reason]),
  });
}

export async function startDeploymentController(kc: k8s.KubeConfig, logger: Logger): Promise<Controller> {
  const apps = kc.makeApiClient(k8s.AppsV1Api);
  const core = kc.makeApiClient(k8s.CoreV1Api);
  return startPodOwnerController(kc, logger, {
    kind: 'Deployment',
    path: '/apis/apps/v1/deployments',
    read: (name, namespace) => apps.readNamespacedDeployment({ name, namespace }),
    listAll: () => apps.listDeploymentForAllNamespaces(),
    plan: planDeployment,
    async create(deployment, action, { key, namespace, log }) {
      for (let i = 0; i < action.count; i += 1) {
        const pod = await core.createNamespacedPod({ namespace, body: deploymentPod(deployment) });
        log.info({ deployment: key, pod: pod.metadata?.name }, 'created pod');
      }
    },
    changedStatus(deployment, pods) {
      const status = deploymentStatus(deployment, pods);
      return comparable(status) !== comparable(deployment.status) ? status : undefined;
    },
    patchStatus: (name, namespace, status) => apps.patchNamespacedDeploymentStatus({ name, namespace, body: { status } }, mergePatch),
  });
}
