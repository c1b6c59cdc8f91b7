/**
 * The local node's StorageClass. Its claims are volumes of the claimed size (as root; folders
 * without a size otherwise), bound and grown online by the node agent, so the class allows expansion. It is the default (as a
 * kind cluster's "standard" class is), so claims that name no class get it, and the operator's
 * volume growth passes the API server's resize admission as it would on a real cluster.
 */
import * as k8s from '@kubernetes/client-node';
import { statusCode } from './kube.js';

export const localStorageClass: k8s.V1StorageClass = {
  apiVersion: 'storage.k8s.io/v1',
  kind: 'StorageClass',
  metadata: { name: 'keelson-local', annotations: { 'storageclass.kubernetes.io/is-default-class': 'true' } },
  provisioner: 'keelson.io/local-node',
  reclaimPolicy: 'Delete',
  volumeBindingMode: 'Immediate',
  allowVolumeExpansion: true,
};

/** Creates the class unless it exists (an admin's edits to an existing one are kept). */
export async function ensureLocalStorageClass(kc: k8s.KubeConfig): Promise<void> {
  try {
    await kc.makeApiClient(k8s.StorageV1Api).createStorageClass({ body: localStorageClass });
  } catch (err) {
    if (statusCode(err) !== 409) throw err;
  }
}
