/**
 * Endpoints controller: keeps the Endpoints object of every Service with a selector in line with
 * the pods it selects. Services without a selector are left alone (their Endpoints are managed by
 * someone else, as on a real cluster).
 */
import * as k8s from '@kubernetes/client-node';
import type { Logger } from '../../lib/log.js';
import { WorkQueue, isConflict, isNotFound, objectKey, splitKey, startInformer } from './kube.js';
import { endpointsFor, endpointsSignature, selectsPod } from './endpoints.js';
import { endpointSlicesFor, ManagedByLabel, ManagedByLocal, ServiceNameLabel, sliceSignature } from './endpoint-slices.js';
import type { Controller } from './statefulset-controller.js';

export async function startEndpointsController(kc: k8s.KubeConfig, logger: Logger): Promise<Controller> {
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const discovery = kc.makeApiClient(k8s.DiscoveryV1Api);
  const log = logger.child({ controller: 'endpoints' });
  let slicesServed = true;

  /** Brings the Service's own EndpointSlices in line with `desired` (none: all of them go). */
  async function syncSlices(namespace: string, name: string, desired: k8s.V1EndpointSlice[]): Promise<void> {
    if (!slicesServed) return;
    const labelSelector = `${ServiceNameLabel}=${name},${ManagedByLabel}=${ManagedByLocal}`;
    let listed: k8s.V1EndpointSliceList;
    try {
      listed = await discovery.listNamespacedEndpointSlice({ namespace, labelSelector });
    } catch (err) {
      if (!isNotFound(err)) throw err;
      // A server without discovery.k8s.io/v1 (1.20): Endpoints only.
      slicesServed = false;
      log.info('discovery.k8s.io/v1 EndpointSlices are not served; writing Endpoints only');
      return;
    }
    const existing = new Map(listed.items.map((s) => [s.metadata?.name ?? '', s]));
    for (const slice of desired) {
      const sliceName = slice.metadata!.name!;
      const current = existing.get(sliceName);
      existing.delete(sliceName);
      if (!current) await discovery.createNamespacedEndpointSlice({ namespace, body: slice });
      else if (sliceSignature(current) !== sliceSignature(slice)) {
        await discovery.replaceNamespacedEndpointSlice({
          name: sliceName,
          namespace,
          body: { ...slice, metadata: { ...slice.metadata, resourceVersion: current.metadata?.resourceVersion } },
        });
      }
    }
    for (const sliceName of existing.keys()) {
      await discovery.deleteNamespacedEndpointSlice({ name: sliceName, namespace }).catch((err: unknown) => {
        if (!isNotFound(err)) throw err;
      });
    }
  }
  const managed = new Set<string>();

  async function reconcile(key: string): Promise<void> {
    const { namespace, name } = splitKey(key);
    // The watch caches, as the real controller reads them: a pod change reaches the Endpoints
    // without a round of reads first. Our own writes are checked against the server (409).
    const service = services.get(name, namespace);
    const selector = service?.spec?.selector;
    const gone = !service || service.metadata?.deletionTimestamp !== undefined;
    if (!service || gone || !selector || Object.keys(selector).length === 0) {
      // Endpoints of a deleted Service go with it; a Service that lost its selector keeps what we
      // wrote last only if someone else took over, so drop ours once.
      if (gone || managed.has(key)) {
        managed.delete(key);
        await core.deleteNamespacedEndpoints({ name, namespace }).catch((err: unknown) => {
          if (!isNotFound(err)) throw err;
        });
        await syncSlices(namespace, name, []);
      }
      return;
    }
    managed.add(key);
    const desired = endpointsFor(
      service,
      pods.list(namespace).filter((pod) => selectsPod(service, pod)),
    );
    // Slices first: they are what the proxy reads when the server serves them.
    await syncSlices(namespace, name, endpointSlicesFor(service, desired.subsets ?? []));
    await writeEndpoints(key, desired, endpoints.get(name, namespace));
  }

  /** Creates or replaces the Endpoints when they differ; a stale cache (409) is read again once. */
  async function writeEndpoints(key: string, desired: k8s.V1Endpoints, cached: k8s.V1Endpoints | undefined): Promise<void> {
    const { namespace, name } = splitKey(key);
    let existing = cached;
    for (let attempt = 0; ; attempt += 1) {
      if (existing && endpointsSignature(existing) === endpointsSignature(desired)) return;
      try {
        if (!existing) await core.createNamespacedEndpoints({ namespace, body: desired });
        // PUT with the read resourceVersion: a concurrent writer makes this a 409.
        else
          await core.replaceNamespacedEndpoints({
            name,
            namespace,
            body: { ...desired, metadata: { ...existing.metadata, labels: desired.metadata?.labels } },
          });
        log.debug({ service: key }, 'endpoints updated');
        return;
      } catch (err) {
        if (!isConflict(err) || attempt > 0) throw err;
      }
      existing = await core.readNamespacedEndpoints({ name, namespace }).catch((err: unknown) => {
        if (isNotFound(err)) return undefined;
        throw err;
      });
    }
  }

  const queue = new WorkQueue(reconcile, log, 300).hold();
  const services = await startInformer(kc, '/api/v1/services', () => core.listServiceForAllNamespaces(), { onChange: (s) => queue.add(objectKey(s)) }, log);
  const endpoints = await startInformer(
    kc,
    '/api/v1/endpoints',
    () => core.listEndpointsForAllNamespaces(),
    {
      onChange: (ep) => {
        if (services.get(ep.metadata?.name ?? '', ep.metadata?.namespace)) queue.add(objectKey(ep));
      },
    },
    log,
  );
  /** The Services a pod change concerns: those selecting it now, and those whose Endpoints list it. */
  const enqueueFor = (pod: k8s.V1Pod): void => {
    const uid = pod.metadata?.uid;
    for (const service of services.list(pod.metadata?.namespace)) {
      const listed = endpoints
        .get(service.metadata?.name ?? '', service.metadata?.namespace)
        ?.subsets?.some((subset) => [...(subset.addresses ?? []), ...(subset.notReadyAddresses ?? [])].some((a) => a.targetRef?.uid === uid));
      if (listed || selectsPod(service, pod)) queue.add(objectKey(service));
    }
  };
  const pods = await startInformer(kc, '/api/v1/pods', () => core.listPodForAllNamespaces(), { onChange: enqueueFor }, log);
  queue.resume();
  queue.startResync(() => services.list().map(objectKey), 10_000);
  return {
    async close() {
      queue.stop();
      await Promise.all([services.stop(), pods.stop(), endpoints.stop()]);
      await queue.idle();
    },
  };
}
