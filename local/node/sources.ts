/** Secret and ConfigMap access for the pods this node runs (claims: claim-capacity.ts). */
import * as k8s from '@kubernetes/client-node';
import { isNotFound, startInformer, type RunningInformer } from '../controllers/kube.js';
import type { Logger } from '../../lib/log.js';
import type { EnvSources } from './env.js';
import type { ProjectedKind } from './projected-volumes.js';

function decodeSecret(secret: k8s.V1Secret): Record<string, string> {
  const decoded: Record<string, string> = {};
  for (const [key, value] of Object.entries(secret.data ?? {})) decoded[key] = Buffer.from(value, 'base64').toString('utf8');
  for (const [key, value] of Object.entries(secret.stringData ?? {})) decoded[key] = value;
  return decoded;
}

export function apiEnvSources(core: k8s.CoreV1Api): EnvSources {
  return {
    async secret(namespace, name) {
      try {
        return decodeSecret(await core.readNamespacedSecret({ name, namespace }));
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
 * Watches every Secret and ConfigMap and reports each one added or changed with its decoded data
 * (a deleted object is not reported: a kubelet keeps the last content in a running pod's volume).
 */
export async function watchProjectedSources(
  kubeConfig: k8s.KubeConfig,
  core: k8s.CoreV1Api,
  logger: Logger,
  onChange: (kind: ProjectedKind, object: k8s.KubernetesObject, data: Record<string, string>) => void,
): Promise<Array<RunningInformer<k8s.KubernetesObject>>> {
  const secrets = await startInformer<k8s.V1Secret>(
    kubeConfig,
    '/api/v1/secrets',
    () => core.listSecretForAllNamespaces(),
    {
      onChange: (secret, type) => {
        if (type !== 'delete') onChange('secret', secret, decodeSecret(secret));
      },
    },
    logger,
  );
  const configMaps = await startInformer<k8s.V1ConfigMap>(
    kubeConfig,
    '/api/v1/configmaps',
    () => core.listConfigMapForAllNamespaces(),
    {
      onChange: (map, type) => {
        if (type !== 'delete') onChange('configMap', map, { ...(map.data ?? {}) });
      },
    },
    logger,
  );
  return [secrets, configMaps];
}
