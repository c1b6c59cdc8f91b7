/**
 * What the StatefulSet and Deployment controllers share: both watch their workloads and the pods
 * those control, read a workload's pods with a fresh LIST on every reconcile (never a possibly
 * stale cache), delete pods under a uid precondition and write status through the /status
 * subresource. The kind supplies its plan, how it creates pods and how it computes status.
 */
import * as k8s from '@kubernetes/client-node';
import type { Logger } from '../../lib/log.js';
import { WorkQueue, controllerOf, isConflict, isNotFound, objectKey, splitKey, startInformer } from './kube.js';
import { selectorString } from './pod-template.js';

export interface Controller {
  close(): Promise<void>;
}

/** A workload that controls pods through a label selector. */
export type PodOwner = k8s.KubernetesObject & { spec?: { selector?: k8s.V1LabelSelector } };

export interface PodDeletion {
  type: 'delete';
  pod: k8s.V1Pod;
  reason: string;
}

/** Where a kind's create step logs: the controller's logger and the workload's namespace/name. */
export interface ReconcileContext {
  key: string;
  namespace: string;
  log: Logger;
}

export interface PodOwnerKind<Owner extends PodOwner, Creation extends { type: 'create' }, Status> {
  kind: 'StatefulSet' | 'Deployment';
  /** The collection the workload informer watches, e.g. /apis/apps/v1/statefulsets. */
  path: string;
  read(name: string, namespace: string): Promise<Owner>;
  listAll(): Promise<k8s.KubernetesListObject<Owner>>;
  plan(owner: Owner, pods: k8s.V1Pod[]): Array<Creation | PodDeletion>;
  create(owner: Owner, action: Creation, context: ReconcileContext): Promise<void>;
  /** The status to write, or undefined when the stored one already says the same. */
  changedStatus(owner: Owner, pods: k8s.V1Pod[]): Status | undefined;
  patchStatus(name: string, namespace: string, status: Status): Promise<unknown>;
}

const isDeletion = <Creation extends { type: 'create' }>(action: Creation | PodDeletion): action is PodDeletion => action.type === 'delete';

export async function startPodOwnerController<Owner extends PodOwner, Creation extends { type: 'create' }, Status>(
  kc: k8s.KubeConfig,
  logger: Logger,
  owners: PodOwnerKind<Owner, Creation, Status>,
): Promise<Controller> {
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const kindField = owners.kind.toLowerCase();
  const log = logger.child({ controller: kindField });

  async function deletePod(key: string, namespace: string, action: PodDeletion): Promise<void> {
    try {
      await core.deleteNamespacedPod({ name: action.pod.metadata?.name ?? '', namespace, body: { preconditions: { uid: action.pod.metadata?.uid } } });
      log.info({ [kindField]: key, pod: action.pod.metadata?.name, reason: action.reason }, 'deleted pod');
    } catch (err) {
      if (!isNotFound(err) && !isConflict(err)) throw err;
    }
  }

  async function reconcile(key: string): Promise<void> {
    const { namespace, name } = splitKey(key);
    let owner: Owner;
    try {
      owner = await owners.read(name, namespace);
    } catch (err) {
      if (isNotFound(err)) return; // dependents go through ownerReference garbage collection
      throw err;
    }
    if (owner.metadata?.deletionTimestamp) return;
    owner.apiVersion ??= 'apps/v1';
    owner.kind ??= owners.kind;
    const listed = await core.listNamespacedPod({ namespace, labelSelector: selectorString(owner.spec?.selector) });
    const pods = listed.items.filter((p) => controllerOf(p, owners.kind)?.uid === owner.metadata?.uid);
    for (const action of owners.plan(owner, pods)) {
      if (isDeletion(action)) await deletePod(key, namespace, action);
      else await owners.create(owner, action, { key, namespace, log });
    }
    const status = owners.changedStatus(owner, pods);
    if (status === undefined) return;
    try {
      await owners.patchStatus(name, namespace, status);
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }

  const queue = new WorkQueue(reconcile, log);
  const workloads = await startInformer(kc, owners.path, () => owners.listAll(), { onChange: (owner) => queue.add(objectKey(owner)) }, log);
  const pods = await startInformer(
    kc,
    '/api/v1/pods',
    () => core.listPodForAllNamespaces(),
    {
      onChange: (pod) => {
        const owner = controllerOf(pod, owners.kind);
        if (owner) queue.add(`${pod.metadata?.namespace}/${owner.name}`);
      },
    },
    log,
  );
  queue.startResync(() => workloads.list().map(objectKey), 10_000);
  return {
    async close() {
      queue.stop();
      await Promise.all([workloads.stop(), pods.stop()]);
      await queue.idle();
    },
  };
}
