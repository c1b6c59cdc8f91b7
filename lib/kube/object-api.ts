import { HttpMethod, KubernetesObjectApi, type KubeConfig, type KubernetesListObject, type KubernetesObject } from '@kubernetes/client-node';

/**
 * client-node's generic object API plus a LIST that names a resourceVersion, which its own
 * `list` cannot. An informer relists with the version it has seen: the API server then answers
 * from its watch cache with a list no older than that version (no etcd quorum read, yet never a
 * step back behind what the cache already holds), as client-go's reflector does.
 */
export class ObjectApi extends KubernetesObjectApi {
  static make(kubeConfig: KubeConfig): ObjectApi {
    const client = kubeConfig.makeApiClient(ObjectApi);
    client.setDefaultNamespace(kubeConfig);
    return client;
  }

  /** LIST of a kind; `resourceVersion` '' (or omitted) asks for the latest state (a quorum read). */
  async listAt<T extends KubernetesObject>(
    apiVersion: string,
    kind: string,
    namespace: string | undefined,
    labelSelector: string | undefined,
    resourceVersion = '',
  ): Promise<KubernetesListObject<T>> {
    const path = await this.specUriPath({ apiVersion, kind, metadata: { namespace } }, 'list');
    const context = this.configuration.baseServer.makeRequestContext(path, HttpMethod.GET);
    context.setHeaderParam('Accept', 'application/json, */*;q=0.8');
    if (labelSelector) context.setQueryParam('labelSelector', labelSelector);
    if (resourceVersion) context.setQueryParam('resourceVersion', resourceVersion);
    return this.requestPromise<KubernetesListObject<T>>(context);
  }
}
