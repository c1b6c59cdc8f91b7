/**
 * What a CSI driver with online expansion and the kubelet do for a claim, on this node: bind it
 * with the capacity of its volume, and carry out growth. When spec.resources.requests.storage
 * goes above status.capacity, the status goes through the states of a real cluster
 * (allocatedResources, allocatedResourceStatuses NodeResizeInProgress, condition
 * FileSystemResizePending) and ends with the new capacity and no condition once the mounted
 * volume is grown. A claim no pod has mounted keeps FileSystemResizePending until one does. A
 * deleted claim's volume is released once no pod of this node uses it.
 */
import * as k8s from '@kubernetes/client-node';
import type { Logger } from '../../lib/log.js';
import { quantityBytes } from '../../api/crd/quantity.js';
import { isNotFound, mergePatch, startInformer, type RunningInformer } from '../controllers/kube.js';
import type { ClaimFilesystems } from './claim-filesystems.js';

const resizePendingMessage = 'Waiting for user to (re-)start a pod to finish file system resize of volume on node.';

export const requestedStorage = (claim: k8s.V1PersistentVolumeClaim): string | undefined => claim.spec?.resources?.requests?.storage as string | undefined;

/** Whether the claim asks for more than its status says it has. */
export function growthWanted(claim: k8s.V1PersistentVolumeClaim): boolean {
  if (claim.status?.phase !== 'Bound') return false;
  const wanted = quantityBytes(requestedStorage(claim));
  const has = quantityBytes(claim.status.capacity?.storage as string | undefined);
  return wanted !== undefined && has !== undefined && wanted > has;
}

function pendingStatus(storage: string, now: Date): k8s.V1PersistentVolumeClaimStatus {
  return {
    allocatedResources: { storage },
    allocatedResourceStatuses: { storage: 'NodeResizePending' },
    conditions: [{ type: 'FileSystemResizePending', status: 'True', lastTransitionTime: now, message: resizePendingMessage }],
  };
}

/** The status of a claim whose volume now has `storage`: resize bookkeeping cleared. */
function grownStatus(storage: string): object {
  return { capacity: { storage }, allocatedResources: { storage }, allocatedResourceStatuses: null, conditions: null };
}

/**
 * Waits-for-claim check of a pod: a claim that does not exist keeps it Pending; an existing one
 * gets its volume (mounted with the requested size) and is marked Bound with that capacity.
 */
export async function bindClaim(core: k8s.CoreV1Api, filesystems: ClaimFilesystems, namespace: string, name: string): Promise<string | undefined> {
  let claim: k8s.V1PersistentVolumeClaim;
  try {
    claim = await core.readNamespacedPersistentVolumeClaim({ name, namespace });
  } catch (err) {
    if (isNotFound(err)) return `persistentvolumeclaim "${name}" not found`;
    throw err;
  }
  const storage = requestedStorage(claim);
  const bytes = quantityBytes(storage);
  const mountedBefore = filesystems.isMounted(namespace, name);
  await filesystems.ensure(namespace, name, bytes ?? 0);
  // A claim grown while no pod had it mounted finishes its resize here, as a kubelet's does at mount.
  let body: object | undefined;
  if (claim.status?.phase !== 'Bound')
    body = { phase: 'Bound', accessModes: claim.spec?.accessModes ?? ['ReadWriteOnce'], capacity: storage ? { storage } : undefined };
  else if (storage && !mountedBefore && growthWanted(claim) && (await filesystems.grow(namespace, name, bytes ?? 0))) body = grownStatus(storage);
  if (body) await core.patchNamespacedPersistentVolumeClaimStatus({ name, namespace, body: { status: body } }, mergePatch);
  return undefined;
}

export interface ClaimResizer {
  stop(): Promise<void>;
}

/**
 * Watches every claim: grows the mounted volume of one that asks for more, and releases the
 * volume of a deleted one (`inUse` says whether a pod of this node still mounts a claim).
 */
export async function startClaimResizer(
  kubeConfig: k8s.KubeConfig,
  core: k8s.CoreV1Api,
  filesystems: ClaimFilesystems,
  inUse: (namespace: string, claim: string) => boolean,
  logger: Logger,
  sweepMs = 5000,
): Promise<ClaimResizer> {
  const busy = new Set<string>();
  const patchStatus = (namespace: string, name: string, status: object): Promise<unknown> =>
    core.patchNamespacedPersistentVolumeClaimStatus({ name, namespace, body: { status } }, mergePatch);

  async function resize(claim: k8s.V1PersistentVolumeClaim): Promise<void> {
    const namespace = claim.metadata?.namespace ?? 'default';
    const name = claim.metadata?.name ?? '';
    const storage = requestedStorage(claim);
    const bytes = quantityBytes(storage);
    if (!storage || bytes === undefined || !growthWanted(claim) || !filesystems.isMounted(namespace, name)) {
      if (storage && growthWanted(claim) && claim.status?.allocatedResources?.storage !== storage)
        await patchStatus(namespace, name, pendingStatus(storage, new Date()));
      return;
    }
    await patchStatus(namespace, name, { ...pendingStatus(storage, new Date()), allocatedResourceStatuses: { storage: 'NodeResizeInProgress' } });
    await filesystems.grow(namespace, name, bytes);
    await patchStatus(namespace, name, grownStatus(storage));
  }

  function handle(claim: k8s.V1PersistentVolumeClaim, type: 'add' | 'update' | 'delete'): void {
    const key = `${claim.metadata?.namespace}/${claim.metadata?.name}`;
    if (type === 'delete' || !growthWanted(claim) || busy.has(key)) return;
    busy.add(key);
    resize(claim)
      .catch((err: unknown) => logger.warn({ claim: key, err: (err as Error).message }, 'claim resize failed'))
      .finally(() => busy.delete(key));
  }

  const informer: RunningInformer<k8s.V1PersistentVolumeClaim> = await startInformer(
    kubeConfig,
    '/api/v1/persistentvolumeclaims',
    () => core.listPersistentVolumeClaimForAllNamespaces(),
    { onChange: handle },
    logger,
  );

  // Deleted claims, and resizes whose event came while the volume was busy or not yet mounted.
  const sweep = setInterval(() => {
    for (const { namespace, claim } of filesystems.mountedClaims()) {
      const stored = informer.get(claim, namespace);
      if (stored) handle(stored, 'update');
      else if (!inUse(namespace, claim)) {
        filesystems
          .release(namespace, claim)
          .catch((err: unknown) => logger.warn({ claim: `${namespace}/${claim}`, err: (err as Error).message }, 'claim release failed'));
      }
    }
  }, sweepMs);
  sweep.unref();

  return {
    async stop() {
      clearInterval(sweep);
      await informer.stop();
    },
  };
}
