/** Deployment controller: pods owned directly by the Deployment (no ReplicaSets, see ADR 0350). */
import * as k8s from '@kubernetes/client-node';
import type { Logger } from '../../lib/log.js';
import { WorkQueue, controllerOf, isConflict, isNotFound, mergePatch, objectKey, splitKey, startInformer } from './kube.js';
import { deploymentPod, deploymentStatus, planDeployment } from './deployment.js';
import { selectorString } from './pod-template.js';
import type { Controller } from './statefulset-controller.js';

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
  const log = logger.child({ controller: 'deployment' });

  async function reconcile(key: string): Promise<void> {
    const { namespace, name } = splitKey(key);
    let deployment: k8s.V1Deployment;
    try {
      deployment = await apps.readNamespacedDeployment({ name, namespace });
    } catch (err) {
      if (isNotFound(err)) return;
      throw err;
    }
    if (deployment.metadata?.deletionTimestamp) return;
    deployment.apiVersion ??= 'apps/v1';
    deployment.kind ??= 'Deployment';
    const listed = await core.listNamespacedPod({ namespace, labelSelector: selectorString(deployment.spec?.selector) });
    const pods = listed.items.filter((p) => controllerOf(p, 'Deployment')?.uid === deployment.metadata?.uid);
    for (const action of planDeployment(deployment, pods)) {
      if (action.type === 'create') {
        for (let i = 0; i < action.count; i += 1) {
          const pod = await core.createNamespacedPod({ namespace, body: deploymentPod(deployment) });
          log.info({ deployment: key, pod: pod.metadata?.name }, 'created pod');
        }
      } else {
        try {
          await core.deleteNamespacedPod({ name: action.pod.metadata?.name ?? '', namespace, body: { preconditions: { uid: action.pod.metadata?.uid } } });
          log.info({ deployment: key, pod: action.pod.metadata?.name, reason: action.reason }, 'deleted pod');
        } catch (err) {
          if (!isNotFound(err) && !isConflict(err)) throw err;
        }
      }
    }
    const status = deploymentStatus(deployment, pods);
    if (comparable(status) !== comparable(deployment.status)) {
      try {
        await apps.patchNamespacedDeploymentStatus({ name, namespace, body: { status } }, mergePatch);
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
    }
  }

  const queue = new WorkQueue(reconcile, log);
  const deployments = await startInformer(
    kc,
    '/apis/apps/v1/deployments',
    () => apps.listDeploymentForAllNamespaces(),
    { onChange: (d) => queue.add(objectKey(d)) },
    log,
  );
  const pods = await startInformer(
    kc,
    '/api/v1/pods',
    () => core.listPodForAllNamespaces(),
    {
      onChange: (pod) => {
        const owner = controllerOf(pod, 'Deployment');
        if (owner) queue.add(`${pod.metadata?.namespace}/${owner.name}`);
      },
    },
    log,
  );
  queue.startResync(() => deployments.list().map(objectKey), 10_000);
  return {
    async close() {
      queue.stop();
      await Promise.all([deployments.stop(), pods.stop()]);
      await queue.idle();
    },
  };
}
