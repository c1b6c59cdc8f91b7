/** Secret, ConfigMap and PersistentVolumeClaim access for the pods this node runs. */
import * as k8s from '@kubernetes/client-node';
import { isNotFound, mergePatch } from '../controllers/kube.js';
import type { EnvSources } from './env.js';

export function apiEnvSources(core: k8s.CoreV1Api): EnvSources {
  return {
    async secret(namespace, name) {
      try {
        const secret = await core.readNamespacedSecret({ name, namespace });
        const decoded: Record<string, string> = {};
        for (const [key, value] of Object.entries(secret.data ?? {})) decoded[key] = Buffer.from(value, 'base64').toString('utf8');
        for (const [key, value] of Object.entries(secret.stringData ?? {})) decoded[key] = value;
        return decoded;
      } catch (err) {
        if (isNotFound(err)) return undefined;
        throw err;
      }
    },
    async configMap(namespace, name) {
      try {
        const map = await core.readNamespacedConfigMap({ name, namespace });
        return { ...(map.data ?? {}) };
      } catch (err) {
        if (isNotFound(err)) return undefined;
        throw err;
      }
    },
  };
}

/**
 * Waits-for-claim check: a pod whose PVC does not exist stays Pending (as with an unbound claim).
 * An existing claim is marked Bound here, because the node folder is its volume.
 */
export async function ensureClaimBound(core: k8s.CoreV1Api, namespace: string, name: string): Promise<string | undefined> {
  let claim: k8s.V1PersistentVolumeClaim;
  try {
    claim = await core.readNamespacedPersistentVolumeClaim({ name, namespace });
  } catch (err) {
    if (isNotFound(err)) return `persistentvolumeclaim "${name}" not found`;
    throw err;
  }
  if (claim.status?.phase === 'Bound') return undefined;
  const storage = claim.spec?.resources?.requests?.storage;
  await core.patchNamespacedPersistentVolumeClaimStatus(
    {
      name,
      namespace,
      body: { status: { phase: 'Bound', accessModes: claim.spec?.accessModes ?? ['ReadWriteOnce'], capacity: storage ? { storage } : undefined } },
    },
    mergePatch,
  );
  return undefined;
}
