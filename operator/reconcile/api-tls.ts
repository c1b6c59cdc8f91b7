import type { V1Pod, V1Secret } from '@kubernetes/client-node';
import { ContainerNames, names, TlsKeys } from '../../api/naming.js';
import type { HaNodeTarget } from '../hanode-client.js';
import type { ReconcileDeps } from './deps.js';

/**
 * How the operator reaches each pod's REST API: HTTPS when the pod's probes use it (every pod of
 * this version; a pod from before TLS is called over HTTP until the roll replaces it), verified
 * against the server CA bundle of `<cluster>-server-tls` (the Secret the operator writes; during a
 * CA rotation it holds both CAs) by the pod's name under the headless Service, which the server
 * certificate covers. Registered before the pass's first call (observe's GET /cluster).
 */
export function podServesHttps(pod: V1Pod): boolean {
  const container = pod.spec?.containers?.find((c) => c.name === ContainerNames.postgres);
  return container?.readinessProbe?.httpGet?.scheme === 'HTTPS';
}

export function haNodeTargets(clusterName: string, namespace: string, pods: V1Pod[], ca: string | undefined): HaNodeTarget[] {
  const suffix = `${names(clusterName).headlessService}.${namespace}.svc`;
  return pods.flatMap((pod) => {
    const host = pod.status?.podIP;
    const name = pod.metadata?.name;
    if (!host || !name) return [];
    return [{ host, https: podServesHttps(pod), serverName: `${name}.${suffix}`, ...(ca ? { ca } : {}) }];
  });
}

export async function useApiTls(deps: Pick<ReconcileDeps, 'api' | 'haNode'>, clusterName: string, namespace: string, pods: V1Pod[]): Promise<void> {
  const ref: V1Secret = { apiVersion: 'v1', kind: 'Secret', metadata: { name: names(clusterName).serverTlsSecret, namespace } };
  const secret = (await deps.api.read(ref)) as V1Secret | undefined;
  const encoded = secret?.data?.[TlsKeys.ca];
  deps.haNode.useTargets(haNodeTargets(clusterName, namespace, pods, encoded ? Buffer.from(encoded, 'base64').toString('utf8') : undefined));
}
