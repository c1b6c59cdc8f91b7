import { Labels, names, podSelector, selectorString, TlsKeys } from '../../api/naming.js';
import { callUrl, type CallAnswer } from '../../lib/http-call.js';
import { Ports } from '../../lib/ports.js';
import { HaNodeClient } from '../../operator/hanode-client.js';
import type { OperatorKubeApi } from '../../operator/kube-api.js';
import { useApiTls } from '../../operator/reconcile/api-tls.js';

/**
 * A cluster's ha-node REST APIs as the operator reaches them: HTTPS to each pod's address, its
 * certificate checked against `<cluster>-server-tls`'s CA by the pod's name under the headless
 * Service. Built fresh for each use, so pods that came back with new addresses are found.
 */
export async function haNodeClientFor(api: OperatorKubeApi, namespace: string, cluster: string): Promise<HaNodeClient> {
  const haNode = new HaNodeClient();
  await useApiTls({ api, haNode }, cluster, namespace, await api.listPods(namespace, selectorString(podSelector(cluster))));
  return haNode;
}

/** One GET of `path` from the database pod at `host` (its cluster read from its labels), verified as above. */
export async function haNodeGet(api: OperatorKubeApi, namespace: string, host: string, path: string, timeoutMs = 3_000): Promise<CallAnswer> {
  const pod = (await api.listPods(namespace, '')).find((p) => p.status?.podIP === host);
  const cluster = pod?.metadata?.labels?.[Labels.cluster];
  if (!pod || !cluster) throw new Error(`no database pod at ${host}`);
  const secret = await api.core.readNamespacedSecret({ namespace, name: names(cluster).serverTlsSecret });
  const ca = Buffer.from(secret.data?.[TlsKeys.ca] ?? '', 'base64').toString('utf8');
  const servername = `${pod.metadata!.name}.${names(cluster).headlessService}.${namespace}.svc`;
  return callUrl(`https://${host}:${Ports.haNodeApi}${path}`, { timeoutMs, tls: { ca, servername } });
}

/** The same, parsed as JSON. */
export async function haNodeJson<T>(api: OperatorKubeApi, namespace: string, host: string, path: string, timeoutMs = 3_000): Promise<T> {
  return JSON.parse((await haNodeGet(api, namespace, host, path, timeoutMs)).body) as T;
}
